/**
 * ferryctl's pipeline commands: `pause`, `resume`, `drain` (every replica, through the
 * control topic) and `state` (this replica, the release answering and the whole fleet).
 */
import { type MessageShape, toJson } from '@bufbuild/protobuf';
import {
  type AdminService,
  FleetStateSchema,
  PipelineStateSchema,
} from '../admin/gen/ferry/admin/v1/admin_pb.ts';
import type { ClientOf } from '../admin/grpc-client.ts';
import type { CliIo, Flags } from './ferryctl-flags.ts';

const desiredNames: Record<number, string> = { 1: 'running', 2: 'paused', 3: 'draining' };

type PartitionLag = { readonly partition: number; readonly lag: bigint };

/**
 * A lag as people read it: the API sends -1 for a partition this replica has fetched
 * nothing from yet (its wire meaning since v0.1.0), which is not a count of records.
 */
export function lagText(lag: bigint): string {
  return lag < 0n ? 'unknown' : String(lag);
}

/** The summed lag, naming the partitions it leaves out because their lag is unknown. */
export function totalLagText(total: bigint, partitions: readonly PartitionLag[]): string {
  const unknown = partitions.filter((p) => p.lag < 0n).map((p) => p.partition);
  if (unknown.length === 0) return String(total);
  const which = unknown.length === 1 ? 'partition' : 'partitions';
  return `${total} (without ${which} ${unknown.join(', ')}: lag unknown)`;
}

function pipelineText(state: MessageShape<typeof PipelineStateSchema> | undefined): string {
  if (!state) return 'no state';
  const json = toJson(PipelineStateSchema, state, { alwaysEmitImplicit: true }) as Record<
    string,
    unknown
  >;
  const lines = [
    `running: ${state.running}`,
    `paused: ${state.paused}${state.paused ? ` (${JSON.stringify(json.pauseReasons)})` : ''}`,
    `partitions: ${state.partitions.map((p) => `${p.partition} (lag ${lagText(p.lag)})`).join(', ') || 'none'}`,
    `total lag: ${totalLagText(state.totalLag, state.partitions)}`,
    `envelopes in flight: ${state.envelopesInFlight}, queued: ${state.envelopesQueued}`,
    `commands in flight: ${state.commandsInFlight}`,
  ];
  if (state.lastError) lines.push(`last error: ${state.lastError}`);
  return lines.join('\n');
}

function fleetText(fleet: MessageShape<typeof FleetStateSchema>): string {
  const desired = fleet.desired;
  const by = desired?.by ? `, by ${desired.by}` : '';
  const why = desired?.reason ? `: ${desired.reason}` : '';
  const lines = [
    `fleet: ${desiredNames[desired?.desired ?? 0] ?? 'unknown'} (version ${desired?.version ?? 0n}${by}${why})`,
    `replicas: ${fleet.totals?.replicas ?? 0}, paused ${fleet.totals?.pausedReplicas ?? 0}, total lag ${fleet.totals?.totalLag ?? 0n}`,
    ...fleet.replicas.map((r) => {
      const partitions = r.state?.partitions.map((p) => p.partition).join(',') || 'none';
      const error = r.state?.lastError ? `, last error: ${r.state.lastError}` : '';
      return `  ${r.id}${r.answering ? ' *' : ''} ${r.version} ${r.state?.phase ?? ''} partitions ${partitions}, lag ${totalLagText(r.state?.totalLag ?? 0n, r.state?.partitions ?? [])}, envelopes ${r.state?.envelopesInFlight ?? 0}${error}, seen ${r.lastSeen}`;
    }),
  ];
  if (fleet.replay) {
    const p = fleet.replay;
    lines.push(
      `dlq replay: ${p.state} on ${p.owner}, replayed ${p.replayed}, scanned ${p.scanned}`,
    );
  }
  return lines.join('\n');
}

const methods = {
  pause: 'pauseConsumption',
  resume: 'resumeConsumption',
  drain: 'drainConsumption',
} as const;

/** Runs `pause`, `resume`, `drain` or `state`; prints this replica's state and the fleet's. */
export async function runPipelineCommand(
  client: ClientOf<typeof AdminService>,
  command: 'pause' | 'resume' | 'drain' | 'state',
  flags: Flags,
  io: CliIo,
  call: { timeoutMs: number },
): Promise<void> {
  const answer =
    command === 'state'
      ? await client.unary('getPipelineState', {}, call)
      : await client.unary(methods[command], { reason: flags.reason ?? '' }, call);
  // GetPipelineState also names the release answering; the steering calls do not.
  const version = 'version' in answer && answer.version ? answer.version : undefined;
  if (flags.json) {
    io.out(
      JSON.stringify({
        // This replica's state at the top, as `state` prints it, then the release and fleet.
        ...(answer.state ? (toJson(PipelineStateSchema, answer.state) as object) : {}),
        ...(version !== undefined ? { version } : {}),
        ...(answer.fleet ? { fleet: toJson(FleetStateSchema, answer.fleet) } : {}),
      }),
    );
    return;
  }
  io.out(pipelineText(answer.state));
  if (version !== undefined) io.out(`version: ${version}`);
  if (answer.fleet) io.out(fleetText(answer.fleet));
}
