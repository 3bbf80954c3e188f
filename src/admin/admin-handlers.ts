/**
 * The AdminService handlers: each gateway RPC is one operation on the sync
 * endpoint through GatewayClient.callSync (the contract module validates it
 * first); the pipeline RPCs go to PipelineControl and the dead-letter replayer.
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import { status } from '@grpc/grpc-js';
import type { ItemOutcome, OperationType } from '../contract/index.ts';
import type { FleetSnapshot } from '../fleet/fleet-control.ts';
import type { DesiredConsumption } from '../pipeline/consumption-mode.ts';
import type { PipelineControl, PipelineState } from '../pipeline/pipeline-control.ts';
import {
  balanceResponse,
  hlrResponse,
  jsonInteger,
  jsonToStruct,
  jsonToValue,
  messageStatusResponse,
  sendersResponse,
} from './admin-payloads.ts';
import { RpcError } from './admin-status.ts';
import { assignedMessageId } from './assigned-id.ts';
import { deadLetterMessage, selectionOf } from './dead-letter-messages.ts';
import type { DeadLetterReplayer } from './dead-letter-replay.ts';
import { desiredCodes, fleetStateMessage } from './fleet-payloads.ts';
import {
  type AdminService,
  PauseReason,
  type PipelineStateSchema,
} from './gen/ferry/admin/v1/admin_pb.ts';
import type { CallContext, MethodsOf, ServiceHandlers } from './grpc-service.ts';

/** The part of GatewayClient the admin API uses. */
export interface SyncCaller {
  callSync(operation: Record<string, unknown>, signal?: AbortSignal): Promise<ItemOutcome>;
}

/** The fleet's control topic, as the pipeline RPCs use it (src/fleet/fleet-control.ts). */
export interface FleetAdmin {
  /** Writes the fleet's desired state; resolves once this replica applied it. */
  setDesired(desired: DesiredConsumption, reason: string): Promise<unknown>;
  snapshot(): FleetSnapshot;
}

export interface AdminHandlersOptions {
  readonly gateway: SyncCaller;
  readonly pipeline: PipelineControl;
  readonly deadLetters: DeadLetterReplayer;
  /** The release GetPipelineState reports. */
  readonly version?: string;
  /** Without it, the pipeline RPCs steer this replica only (tests, a lone process). */
  readonly fleet?: FleetAdmin | undefined;
}

export type AdminServiceHandlers = ServiceHandlers<MethodsOf<typeof AdminService>>;

/** Default and ceiling of `ReplayDeadLettersRequest.limit` (0 means the default). */
export const REPLAY_DEFAULT_LIMIT = 1000;
export const REPLAY_MAX_LIMIT = 100_000;
/** Default and ceiling of `ListDeadLettersRequest.limit` (0 means the default). */
export const LIST_DEFAULT_LIMIT = 100;
export const LIST_MAX_LIMIT = 1000;

/** A request's limit: 0 means `fallback`; beyond `max` is INVALID_ARGUMENT. */
function limitOf(requested: number, fallback: number, max: number): number {
  const limit = requested === 0 ? fallback : requested;
  if (limit > max) throw new RpcError(status.INVALID_ARGUMENT, `limit: must be at most ${max}`);
  return limit;
}

/**
 * The data of a successful item; a failed item (spec: Response item, `success`
 * false) becomes NOT_FOUND when the gateway says so, else FAILED_PRECONDITION,
 * with the gateway's own text.
 */
function itemData(item: ItemOutcome): unknown {
  if (item.success) return item.data;
  const code = /not found/i.test(item.error) ? status.NOT_FOUND : status.FAILED_PRECONDITION;
  throw new RpcError(code, `gateway: ${item.error}`);
}

function definedFields(fields: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== undefined));
}

const pauseReasonCodes = {
  operator: PauseReason.OPERATOR,
  access_denied: PauseReason.ACCESS_DENIED,
  draining: PauseReason.DRAINING,
} as const;

/** The pipeline state as the API shows it. */
export function pipelineStateMessage(
  state: PipelineState,
): MessageInitShape<typeof PipelineStateSchema> {
  const knownLags = state.partitions.filter((p) => p.lag >= 0);
  return {
    running: state.running,
    paused: state.paused,
    pauseReasons: state.pauseReasons.map((reason) => pauseReasonCodes[reason]),
    partitions: state.partitions.map((p) => ({
      topic: p.topic,
      partition: p.partition,
      lag: BigInt(p.lag),
    })),
    envelopesInFlight: state.envelopesInFlight,
    envelopesQueued: state.envelopesQueued,
    commandsInFlight: state.commandsInFlight,
    ...(state.lastError === undefined ? {} : { lastError: state.lastError }),
    totalLag: BigInt(knownLags.reduce((sum, p) => sum + p.lag, 0)),
    phase: state.phase,
    desired: desiredCodes[state.desired],
  };
}

/** Builds the handlers of every AdminService RPC. */
export function createAdminHandlers(options: AdminHandlersOptions): AdminServiceHandlers {
  const { gateway, pipeline, deadLetters, fleet } = options;
  const version = options.version ?? '';

  /** Applies a desired state to the fleet (or this replica alone) and shows the outcome. */
  async function steer(desired: DesiredConsumption, reason: string) {
    if (fleet) await fleet.setDesired(desired, reason);
    else pipeline.setDesired(desired);
    return pipelineAnswer();
  }

  function pipelineAnswer() {
    return {
      state: pipelineStateMessage(pipeline.state()),
      ...(fleet ? { fleet: fleetStateMessage(fleet.snapshot(), pipelineStateMessage) } : {}),
    };
  }

  /** One operation on the sync endpoint; the item's data when it succeeded. */
  async function call(
    type: OperationType,
    fields: Record<string, unknown>,
    context: CallContext,
  ): Promise<unknown> {
    const item = await gateway.callSync({ type, ...definedFields(fields) }, context.signal);
    return itemData(item);
  }

  /** Fields of an operation whose request fields the spec does not show; `type` is ours to set. */
  function undisclosedFields(fields: Record<string, unknown> | undefined): Record<string, unknown> {
    if (fields === undefined) return {};
    if ('type' in fields) {
      throw new RpcError(status.INVALID_ARGUMENT, 'fields.type: is set by the RPC, leave it out');
    }
    return fields;
  }

  return {
    async getBalance(_request, context) {
      return balanceResponse(await call('balance', {}, context));
    },
    async listSenders(_request, context) {
      return sendersResponse(await call('sender', {}, context));
    },
    async lookupHlr(request, context) {
      // The gateway requires an id, which means nothing to whoever asks: pick one.
      const id = request.id ?? assignedMessageId();
      const fields = { id: jsonInteger(id, 'id'), phone: jsonInteger(request.phone, 'phone') };
      return { ...hlrResponse(await call('hlr', fields, context)), id };
    },
    async getMessageStatus(request, context) {
      const fields = { id: jsonInteger(request.id, 'id') };
      return messageStatusResponse(await call('status', fields, context));
    },
    async callOtp(request, context) {
      const fields = {
        id: jsonInteger(request.id, 'id'),
        phone: jsonInteger(request.phone, 'phone'),
      };
      return { result: jsonToStruct(await call('call/otp', fields, context)) };
    },
    async createTemplate(request, context) {
      const fields = { template: request.template, name: request.name };
      return { template: jsonToStruct(await call('template/create', fields, context)) };
    },
    async deleteTemplates(request, context) {
      const fields = { id: request.id, template: request.template };
      return { result: jsonToValue(await call('template/delete', fields, context)) };
    },
    async listTemplates(_request, context) {
      const data = await call('template/list', {}, context);
      const list = Array.isArray(data) ? data : [data];
      return { templates: list.map(jsonToStruct) };
    },
    async createViberTemplate(request, context) {
      const data = await call('template/viber/create', undisclosedFields(request.fields), context);
      return { result: jsonToValue(data) };
    },
    async deleteViberTemplates(request, context) {
      const data = await call('template/viber/delete', undisclosedFields(request.fields), context);
      return { result: jsonToValue(data) };
    },
    async listViberTemplates(request, context) {
      const data = await call('template/viber/list', undisclosedFields(request.fields), context);
      return { result: jsonToValue(data) };
    },
    async pauseConsumption(request) {
      return steer('paused', request.reason);
    },
    async resumeConsumption(request) {
      return steer('running', request.reason);
    },
    async drainConsumption(request) {
      return steer('draining', request.reason);
    },
    async getPipelineState() {
      return { ...pipelineAnswer(), version };
    },
    async replayDeadLetters(request, context) {
      const outcome = await deadLetters.replay({
        ...selectionOf(request),
        limit: limitOf(request.limit, REPLAY_DEFAULT_LIMIT, REPLAY_MAX_LIMIT),
        ...(request.includeInDoubt ? { includeInDoubt: true } : {}),
        ...(request.dryRun ? { dryRun: true } : {}),
        signal: context.signal,
      });
      const { wouldReplay, ...counts } = outcome;
      return {
        ...counts,
        // What a dry run shows is what would be sent: the command itself included.
        wouldReplay: (wouldReplay ?? []).map((record) => deadLetterMessage(record, false, true)),
      };
    },
    async listDeadLetters(request, context) {
      const listing = await deadLetters.list({
        ...selectionOf(request),
        ...(request.inDoubt === undefined ? {} : { inDoubt: request.inDoubt }),
        limit: limitOf(request.limit, LIST_DEFAULT_LIMIT, LIST_MAX_LIMIT),
        signal: context.signal,
      });
      return {
        deadLetters: listing.deadLetters.map(({ record, replayed }) =>
          deadLetterMessage(record, replayed, request.includeValue),
        ),
        scanned: listing.scanned,
        limitReached: listing.limitReached,
      };
    },
  };
}
