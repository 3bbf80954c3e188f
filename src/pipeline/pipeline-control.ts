/**
 * What operators steer and see of the pipeline (admin API, readiness, metrics).
 * The pipeline implements it; the admin API depends on this interface only.
 */

import type { ConsumptionPhase, DesiredConsumption } from './consumption-mode.ts';

/**
 * Why fetching is stopped: an operator paused (sending stops too), an operator is
 * draining (commands already read still go out), or the gateway rejected the key.
 */
export type PauseReason = 'operator' | 'access_denied' | 'draining';

export interface PartitionState {
  readonly topic: string;
  readonly partition: number;
  /** Records behind the last fetched batch, -1 when not known yet. */
  readonly lag: number;
}

export interface PipelineState {
  /** The consumer is in the group and fetching (or paused). */
  readonly running: boolean;
  readonly paused: boolean;
  readonly pauseReasons: readonly PauseReason[];
  readonly partitions: readonly PartitionState[];
  readonly envelopesInFlight: number;
  readonly envelopesQueued: number;
  /** Commands read from Kafka whose results are not committed yet. */
  readonly commandsInFlight: number;
  /** The last `Access denied` or other stop cause, for people. */
  readonly lastError?: string;
  /** The operator's desired state this replica applies (src/pipeline/consumption-mode.ts). */
  readonly desired: DesiredConsumption;
  /** What this replica does now: `drained` once a drain has nothing left in flight. */
  readonly phase: ConsumptionPhase;
}

export interface PipelineControl {
  /** Stops fetching and sending; commands in flight wait, nothing is failed. Idempotent. */
  pause(reason: 'operator'): void;
  /** Clears every pause reason, including an `Access denied` stop; sending resumes. Idempotent. */
  resume(): void;
  /** Applies the operator's desired state (the fleet's, from the control topic). Idempotent. */
  setDesired(desired: DesiredConsumption): void;
  state(): PipelineState;
}
