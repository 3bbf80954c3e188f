import {
  ALPHA_NAME_ERROR,
  hookOperationTypes,
  INSUFFICIENT_BALANCE,
  INVALID_MESSAGE_TYPE,
  MESSAGE_NOT_FOUND,
  type OperationType,
  validateOperation,
} from '../contract/index.ts';
import type { Account } from './account.ts';
import { lookupHlr } from './hlr.ts';
import type { EmulatorKnobs } from './knobs.ts';
import {
  type AcceptedMessage,
  type Channel,
  type FinalState,
  isoWithOffset,
  type MessageLedger,
  type ReplyRecord,
  statusRecord,
} from './message-ledger.ts';
import { countParts } from './message-parts.ts';
import { type Random, randomIntBetween } from './random.ts';
import type { TemplateStore } from './template-store.ts';

// The emulator's item error texts for what the spec shows no text for; they live with
// the contract because ferry gives each its own result code.
export { INSUFFICIENT_BALANCE, MESSAGE_NOT_FOUND };
/** Callback `error` of a message whose final state is a failure (the spec shows no text for it). */
export const NOT_DELIVERED = 'Message not delivered';
/** Final status of a message that was not delivered (the spec lists no failure status). */
export const UNDELIVERED_STATUS = 'UNDELIVERED';
/** Callback status of a refused async request (spec: States and transitions). */
export const REJECTED_STATUS = 'REJECTED';

/** One item of a response envelope's `data` (spec: Response item). */
export type ResponseItemBody =
  | { readonly success: true; readonly data: unknown }
  | { readonly success: false; readonly error: string; readonly data?: { readonly id: unknown } };

/** What one operation sees: the emulator's state, its randomness and knobs, the time and the async request. */
export interface OperationContext {
  readonly account: Account;
  readonly ledger: MessageLedger;
  readonly templates: TemplateStore;
  readonly random: Random;
  readonly knobs: Readonly<EmulatorKnobs>;
  /** The account notification address: where `pipeline` statuses go (spec: pipeline rule 2). */
  readonly notificationUrl: string | undefined;
  readonly nowMs: number;
  /** Set on the async endpoint: repeated in callbacks (spec: Async response). */
  readonly requestId: string | undefined;
}

/** The item answered for an operation and, for a send, the message accepted. */
export interface OperationOutcome {
  readonly item: ResponseItemBody;
  readonly accepted?: AcceptedMessage;
}

type Fields = Readonly<Record<string, unknown>>;
type Handler = (
  context: OperationContext,
  operation: Fields,
  type: OperationType,
) => OperationOutcome;

/**
 * Processes one operation of an accepted envelope: checks it with the same
 * validator as ferry (src/contract), then performs it on the emulator's state.
 * Never throws; a failure is an item with `success` false (spec: Errors).
 */
export function processOperation(context: OperationContext, value: unknown): OperationOutcome {
  const validation = validateOperation(value);
  if (!validation.ok) {
    // spec: Endpoints — `whatsapp` (like any value that is not an operation type) fails with exactly this text.
    const error = validation.rule === 'invalid_type' ? INVALID_MESSAGE_TYPE : validation.message;
    return { item: failure(value, error) };
  }
  const operation = validation.value as Fields;
  const type = operation.type as OperationType;
  try {
    return handlers[type](context, operation, type);
  } catch (error: unknown) {
    // One operation the emulator cannot perform (e.g. an opaque Viber template too deep to keep)
    // fails alone; the rest of the envelope is unaffected (spec: Errors, one item per operation).
    return { item: failure(operation, error instanceof Error ? error.message : String(error)) };
  }
}

/** A failed item: `success` false, the error, and `data` holding only `id` when the operation has one (spec: Send result payload). */
export function failure(operation: unknown, error: string): ResponseItemBody {
  if (typeof operation === 'object' && operation !== null && Object.hasOwn(operation, 'id')) {
    return { success: false, error, data: { id: (operation as Fields).id } };
  }
  return { success: false, error };
}

const send: Handler = (context, operation, type) => {
  if (hasUnknownSignature(context.account, operation)) {
    return { item: failure(operation, ALPHA_NAME_ERROR) };
  }
  // Parts come from the SMS text of an `sms`; every other channel bills one part (docs/emulator.md).
  const parts =
    type === 'sms' && typeof operation.sms_message === 'string'
      ? countParts(operation.sms_message)
      : 1;
  if (!context.account.charge(context.account.priceOf(parts))) {
    return { item: failure(operation, INSUFFICIENT_BALANCE) };
  }
  const accepted = accept(context, operation, type);
  // `data` inside a send result: its meaning is not shown (spec: Send result payload); the emulator puts 1.
  return {
    item: { success: true, data: { id: operation.id, msg_id: accepted.msgId, parts, data: 1 } },
    accepted,
  };
};

const callOtp: Handler = (context, operation, type) => {
  const fee = context.account.priceOf(1);
  if (!context.account.charge(fee)) return { item: failure(operation, INSUFFICIENT_BALANCE) };
  const accepted = accept(context, operation, type);
  const code = String(randomIntBetween(context.random, 0, 9999)).padStart(4, '0');
  // spec: call/otp — the call comes from a number whose last 4 digits are the code.
  const caller = 442_071_230_000 + Number(code);
  return {
    item: { success: true, data: { id: operation.id, msg_id: accepted.msgId, code, caller, fee } },
    accepted,
  };
};

const handlers: Readonly<Record<OperationType, Handler>> = {
  balance: (context) => ({
    item: {
      success: true,
      data: { amount: context.account.balance, currency: context.account.currency },
    },
  }),
  sender: (context) => ({ item: { success: true, data: context.account.senderRecords() } }),
  hlr: (_context, operation) => ({
    item: { success: true, data: lookupHlr(operation.phone as number) },
  }),
  status: (context, operation) => {
    const message = context.ledger.find(operation.id);
    if (message === undefined) return { item: failure(operation, MESSAGE_NOT_FOUND) };
    return { item: { success: true, data: statusRecord(message, context.nowMs) } };
  },
  'call/otp': callOtp,
  sms: send,
  telegram: send,
  rcs: send,
  'rcs+sms': send,
  'rcs+viber+sms': send,
  viber: send,
  'viber+sms': send,
  voice: send,
  pipeline: send,
  'template/create': (context, operation) => {
    const name = typeof operation.name === 'string' ? operation.name : undefined;
    const template = context.templates.createSms(operation.template as string, name, context.nowMs);
    return { item: { success: true, data: template } };
  },
  'template/list': (context) => ({ item: { success: true, data: context.templates.listSms() } }),
  'template/delete': (context, operation) => {
    const id = typeof operation.id === 'string' ? operation.id : undefined;
    const text = typeof operation.template === 'string' ? operation.template : undefined;
    return { item: { success: true, data: { deleted: context.templates.deleteSms(id, text) } } };
  },
  'template/viber/create': (context, operation) => {
    const { type: _type, ...fields } = operation;
    return { item: { success: true, data: context.templates.createViber(fields, context.nowMs) } };
  },
  'template/viber/list': (context) => ({
    item: { success: true, data: context.templates.listViber() },
  }),
  'template/viber/delete': (context, operation) => ({
    item: { success: true, data: { deleted: context.templates.deleteViber(operation.id) } },
  }),
};

/** Channels a send tries, in order (fallback chains and `pipeline`). */
function channelsOf(operation: Fields, type: OperationType): readonly Channel[] {
  switch (type) {
    case 'rcs+sms':
      return ['rcs', 'sms'];
    case 'rcs+viber+sms':
      return ['rcs', 'viber', 'sms'];
    case 'viber+sms':
      return ['viber', 'sms'];
    case 'viber':
    case 'rcs':
    case 'telegram':
    case 'sms':
      return [type];
    case 'pipeline':
      return Array.isArray(operation.pipeline) && operation.pipeline.length > 0
        ? (operation.pipeline as Channel[])
        : ['sms'];
    default:
      return ['voice'];
  }
}

const signatureFields = ['sms_signature', 'rcs_signature', 'viber_signature'] as const;
const pipelineSignedStages = ['sms', 'viber', 'rcs'] as const;

/**
 * Whether a send names an alpha-name the account does not have (spec: Errors,
 * `Error in Alpha-name`): the `*_signature` fields, and the `signature` of the
 * `sms`, `viber` and `rcs` stages a `pipeline` uses. WhatsApp signatures are not
 * checked (spec: pipeline rule 5: not validated).
 */
function hasUnknownSignature(account: Account, operation: Fields): boolean {
  for (const field of signatureFields) {
    const signature = operation[field];
    if (typeof signature === 'string' && !account.hasSender(signature)) return true;
  }
  if (operation.type === 'pipeline' && Array.isArray(operation.pipeline)) {
    for (const stage of pipelineSignedStages) {
      if (!operation.pipeline.includes(stage)) continue;
      const stageFields = operation[stage];
      if (typeof stageFields !== 'object' || stageFields === null) continue;
      const signature = (stageFields as Fields).signature;
      if (typeof signature === 'string' && !account.hasSender(signature)) return true;
    }
  }
  return false;
}

/** Records an accepted send, deciding now the final state it shows after `callbackDelayMs`. */
function accept(
  context: OperationContext,
  operation: Fields,
  type: OperationType,
): AcceptedMessage {
  const channels = channelsOf(operation, type);
  const firstChannel = channels[0] ?? 'sms';
  const finalAtMs = context.nowMs + context.knobs.callbackDelayMs;
  const message: AcceptedMessage = {
    id: operation.id,
    msgId: context.ledger.nextMsgId(),
    operationType: type,
    requestId: context.requestId,
    firstChannel,
    acceptedAtMs: context.nowMs,
    finalAtMs,
    final: decideFinalState(context, channels, finalAtMs),
    callbackUrl: callbackUrlOf(context, operation, type),
  };
  context.ledger.record(message);
  return message;
}

function decideFinalState(
  context: OperationContext,
  channels: readonly Channel[],
  finalAtMs: number,
): FinalState {
  const { random, knobs } = context;
  if (random() < knobs.deliveryFailureRate) {
    const channel = channels[channels.length - 1] ?? 'sms';
    const failed: FinalState = {
      success: false,
      channel,
      status: UNDELIVERED_STATUS,
      error: NOT_DELIVERED,
    };
    return channel === 'voice' ? { ...failed, durationS: 0 } : failed;
  }
  const channel = channels[0] ?? 'sms';
  if (channel === 'viber') {
    if (random() < knobs.viberReplyRate) {
      return {
        success: true,
        channel,
        status: 'REPLIED',
        replies: viberReplies(random, finalAtMs),
      };
    }
    return viberRead;
  }
  if (channel === 'voice') {
    const durationS = randomIntBetween(random, 5, 60);
    const reply = random() < 0.5 ? String(randomIntBetween(random, 0, 9)) : undefined;
    return reply === undefined
      ? { success: true, channel, status: 'DELIVERED', durationS }
      : { success: true, channel, status: 'DELIVERED', durationS, reply };
  }
  return deliveredOn[channel];
}

// The common final states carry nothing per message: one shared object each keeps the ledger small
// (a benchmark run accepts millions of messages).
const viberRead: FinalState = Object.freeze({ success: true, channel: 'viber', status: 'READ' });
const deliveredOn: Readonly<Record<Exclude<Channel, 'voice' | 'viber'>, FinalState>> = {
  sms: Object.freeze({ success: true, channel: 'sms', status: 'DELIVERED' }),
  rcs: Object.freeze({ success: true, channel: 'rcs', status: 'DELIVERED' }),
  telegram: Object.freeze({ success: true, channel: 'telegram', status: 'DELIVERED' }),
  whatsapp: Object.freeze({ success: true, channel: 'whatsapp', status: 'DELIVERED' }),
};

/** Viber 2 Way replies: a text, and every other time an attachment too (spec: Message status record). */
function viberReplies(random: Random, finalAtMs: number): ReplyRecord[] {
  const replies: ReplyRecord[] = [
    { datetime: isoWithOffset(finalAtMs), message: 'Yes, thank you' },
  ];
  if (random() < 0.5) {
    const number = randomIntBetween(random, 1, 9999);
    replies.push({
      datetime: isoWithOffset(finalAtMs),
      media: {
        url: `https://media.emulator.invalid/replies/${number}.jpg`,
        filename: `photo-${number}.jpg`,
        filesize: randomIntBetween(random, 10_000, 500_000),
      },
    });
  }
  return replies;
}

/**
 * Where the final-state callback of a send goes: `hook` for the operations that
 * accept it (spec: Events), the account notification address for `pipeline`
 * (spec: pipeline rule 2), nowhere otherwise.
 */
function callbackUrlOf(
  context: OperationContext,
  operation: Fields,
  type: OperationType,
): string | undefined {
  if (type === 'pipeline') return context.notificationUrl;
  if (hookOperationTypes.has(type) && typeof operation.hook === 'string') return operation.hook;
  return undefined;
}

/**
 * Where a `REJECTED` callback for a refused async operation goes: its `hook`, for
 * the operations that accept one and for `pipeline` (spec: pipeline rule 3), when
 * it is an absolute http(s) URL.
 */
export function rejectionUrlOf(operation: unknown): string | undefined {
  if (typeof operation !== 'object' || operation === null) return undefined;
  const { type, hook } = operation as Fields;
  if (typeof hook !== 'string' || typeof type !== 'string') return undefined;
  if (type !== 'pipeline' && !hookOperationTypes.has(type as OperationType)) return undefined;
  return isHttpUrl(hook) ? hook : undefined;
}

/** Whether `value` is an absolute http(s) URL. */
export function isHttpUrl(value: string): boolean {
  const url = URL.parse(value);
  return url !== null && (url.protocol === 'http:' || url.protocol === 'https:');
}

/** Callback `type` values the spec lists (spec: Events); other channels leave `type` out. */
const callbackTypes: ReadonlySet<Channel> = new Set<Channel>(['sms', 'viber', 'voice', 'rcs']);

/** The status callback body of a message at its final state (spec: Events table). */
export function finalStateCallback(message: AcceptedMessage): Record<string, unknown> {
  const final = message.final;
  const body: Record<string, unknown> = { success: final.success };
  if (message.id !== undefined && message.id !== null) body.id = String(message.id);
  body.msg_id = message.msgId;
  if (callbackTypes.has(final.channel)) body.type = final.channel;
  body.status = final.status;
  if (final.error !== undefined) body.error = final.error;
  body.updated = isoWithOffset(message.finalAtMs);
  if (message.requestId !== undefined) body.request_id = message.requestId;
  if (final.replies !== undefined) body.replies = final.replies;
  if (final.durationS !== undefined) body.duration = final.durationS;
  if (final.reply !== undefined) body.reply = final.reply;
  return body;
}

/** The `REJECTED` callback body of an async operation that was refused (spec: Errors). */
export function rejectedCallback(
  operation: unknown,
  requestId: string,
  error: string,
  nowMs: number,
): Record<string, unknown> {
  const body: Record<string, unknown> = { success: false };
  const id =
    typeof operation === 'object' && operation !== null ? (operation as Fields).id : undefined;
  // Events table: `id` is a string; an id of another JSON type (an invalid operation) is left out.
  if (typeof id === 'number' || typeof id === 'string') body.id = String(id);
  body.status = REJECTED_STATUS;
  body.error = error;
  body.updated = isoWithOffset(nowMs);
  body.request_id = requestId;
  return body;
}
