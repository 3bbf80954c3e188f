import type {
  PartitionState,
  PauseReason,
  PipelineControl,
  PipelineState,
} from '../../src/pipeline/pipeline-control.ts';

/** A test double of the pipeline's control surface: real state, no Kafka. */
export class InMemoryPipeline implements PipelineControl {
  readonly #reasons = new Set<PauseReason>();
  #lastError: string | undefined;
  partitions: PartitionState[] = [
    { topic: 'ferry.commands', partition: 0, lag: 5 },
    { topic: 'ferry.commands', partition: 1, lag: -1 },
    { topic: 'ferry.commands', partition: 2, lag: 7 },
  ];
  envelopesInFlight = 2;
  envelopesQueued = 3;
  commandsInFlight = 11;

  pause(reason: 'operator'): void {
    this.#reasons.add(reason);
  }

  /** What the pipeline does when the gateway answers `Access denied` (README, Guarantees 5). */
  stopForAccessDenied(error: string): void {
    this.#reasons.add('access_denied');
    this.#lastError = error;
  }

  resume(): void {
    this.#reasons.clear();
  }

  state(): PipelineState {
    return {
      running: true,
      paused: this.#reasons.size > 0,
      pauseReasons: [...this.#reasons],
      partitions: this.partitions,
      envelopesInFlight: this.envelopesInFlight,
      envelopesQueued: this.envelopesQueued,
      commandsInFlight: this.commandsInFlight,
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
    };
  }
}
