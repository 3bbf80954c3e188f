/**
 * The fleet as the admin API shows it (FleetState in admin.proto): the desired state,
 * every live replica with its own PipelineState, their sums, and the replay progress.
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import type { FleetSnapshot } from '../fleet/fleet-control.ts';
import type { DesiredConsumption as Desired } from '../pipeline/consumption-mode.ts';
import type { PipelineState } from '../pipeline/pipeline-control.ts';
import {
  DesiredConsumption,
  type FleetStateSchema,
  type PipelineStateSchema,
} from './gen/ferry/admin/v1/admin_pb.ts';

export const desiredCodes = {
  running: DesiredConsumption.RUNNING,
  paused: DesiredConsumption.PAUSED,
  draining: DesiredConsumption.DRAINING,
} as const satisfies Record<Desired, DesiredConsumption>;

function iso(ms: number): string {
  return ms > 0 ? new Date(ms).toISOString() : '';
}

function knownLag(state: PipelineState): number {
  return state.partitions.reduce((sum, p) => sum + (p.lag >= 0 ? p.lag : 0), 0);
}

/**
 * @param pipelineMessage how one replica's PipelineState is shown (admin-handlers.ts).
 */
export function fleetStateMessage(
  snapshot: FleetSnapshot,
  pipelineMessage: (state: PipelineState) => MessageInitShape<typeof PipelineStateSchema>,
): MessageInitShape<typeof FleetStateSchema> {
  const { desired, replicas, progress } = snapshot;
  const states = replicas.map((r) => r.state);
  const sum = (pick: (state: PipelineState) => number) =>
    states.reduce((total, state) => total + pick(state), 0);
  return {
    desired: {
      desired: desiredCodes[desired.desired],
      version: BigInt(desired.version),
      reason: desired.reason,
      by: desired.by,
      at: desired.at,
    },
    replicas: replicas.map((replica) => ({
      id: replica.id,
      version: replica.version,
      state: pipelineMessage(replica.state),
      lastSeen: iso(replica.seenAtMs),
      answering: replica.id === snapshot.self,
      appliedVersion: BigInt(replica.appliedVersion),
      appliedAt: iso(replica.appliedAtMs),
    })),
    totals: {
      replicas: replicas.length,
      pausedReplicas: states.filter((s) => s.paused).length,
      partitions: sum((s) => s.partitions.length),
      totalLag: BigInt(sum(knownLag)),
      envelopesInFlight: sum((s) => s.envelopesInFlight),
      envelopesQueued: sum((s) => s.envelopesQueued),
      commandsInFlight: sum((s) => s.commandsInFlight),
    },
    ...(progress
      ? {
          replay: {
            owner: progress.owner,
            state: progress.state,
            replayed: progress.replayed,
            scanned: progress.scanned,
            skipped: progress.skipped,
            alreadyReplayed: progress.alreadyReplayed,
            startedAt: iso(progress.startedAtMs),
            updatedAt: iso(progress.updatedAtMs),
            ...(progress.error === undefined ? {} : { error: progress.error }),
          },
        }
      : {}),
  };
}
