/**
 * The bulk lane and, when configured, the urgent lane: two pipelines in one process,
 * each with its own consumer group, send queue, in-flight budget and transactions, so a
 * login code never waits in a queue behind a campaign (the urgent one runs on a thread
 * of its own: src/urgent-lane/). Operators steer them as one: a pause, a resume or a
 * drain applies to both, and the state shows both.
 */
import type { DesiredConsumption } from './consumption-mode.ts';
import type { PipelineControl, PipelineState } from './pipeline-control.ts';

/** A lane as the process starts and stops it: a pipeline, or a thread running one. */
export interface Lane extends PipelineControl {
  readonly running: boolean;
  /** The partitions of its first assignment are taken over (see Pipeline.takenOver). */
  readonly takenOver: boolean;
  start(): Promise<void>;
  /** @returns true when it drained within `graceMs`. */
  stop(graceMs: number): Promise<boolean>;
}

export class PipelineLanes implements PipelineControl {
  readonly bulk: Lane;
  readonly urgent: Lane | undefined;

  constructor(bulk: Lane, urgent?: Lane) {
    this.bulk = bulk;
    this.urgent = urgent;
  }

  get #lanes(): Lane[] {
    return this.urgent ? [this.urgent, this.bulk] : [this.bulk];
  }

  get running(): boolean {
    return this.#lanes.every((lane) => lane.running);
  }

  get takenOver(): boolean {
    return this.#lanes.every((lane) => lane.takenOver);
  }

  /** The urgent lane first: its commands flow while the bulk lane is still joining. */
  async start(): Promise<void> {
    for (const lane of this.#lanes) await lane.start();
  }

  /** Both lanes drain at once, within the same grace. @returns true when both drained. */
  async stop(graceMs: number): Promise<boolean> {
    const drained = await Promise.all(this.#lanes.map((lane) => lane.stop(graceMs)));
    return drained.every(Boolean);
  }

  pause(reason: 'operator'): void {
    for (const lane of this.#lanes) lane.pause(reason);
  }

  resume(): void {
    for (const lane of this.#lanes) lane.resume();
  }

  setDesired(desired: DesiredConsumption): void {
    for (const lane of this.#lanes) lane.setDesired(desired);
  }

  /** The bulk lane's state with the urgent lane's partitions and counts added. */
  state(): PipelineState {
    const bulk = this.bulk.state();
    if (!this.urgent) return bulk;
    const urgent = this.urgent.state();
    const state: PipelineState = {
      ...bulk,
      running: bulk.running && urgent.running,
      paused: bulk.paused || urgent.paused,
      pauseReasons: [...new Set([...bulk.pauseReasons, ...urgent.pauseReasons])],
      partitions: [...urgent.partitions, ...bulk.partitions],
      envelopesInFlight: bulk.envelopesInFlight + urgent.envelopesInFlight,
      envelopesQueued: bulk.envelopesQueued + urgent.envelopesQueued,
      commandsInFlight: bulk.commandsInFlight + urgent.commandsInFlight,
      // Drained only once both are.
      phase: bulk.phase === 'drained' && urgent.phase !== 'drained' ? urgent.phase : bulk.phase,
    };
    const lastError = bulk.lastError ?? urgent.lastError;
    return lastError === undefined ? state : { ...state, lastError };
  }
}
