import { ConsumptionMode, type DesiredConsumption } from '../../src/pipeline/consumption-mode.ts';
import type {
  PartitionState,
  PipelineControl,
  PipelineState,
} from '../../src/pipeline/pipeline-control.ts';

/** A test double of the pipeline's control surface: real state, no Kafka. */
export class InMemoryPipeline implements PipelineControl {
  readonly #mode = new ConsumptionMode();
  #lastError: string | undefined;
  partitions: PartitionState[] = [
    { topic: 'ferry.commands', partition: 0, lag: 5 },
    { topic: 'ferry.commands', partition: 1, lag: -1 },
    { topic: 'ferry.commands', partition: 2, lag: 7 },
  ];
  envelopesInFlight = 2;
  envelopesQueued = 3;
  commandsInFlight = 11;

  pause(_reason: 'operator'): void {
    this.#mode.desired('paused');
  }

  /** What the pipeline does when the gateway answers `Access denied` (README, Guarantees 5). */
  stopForAccessDenied(error: string): void {
    this.#mode.accessDenied(error);
    this.#lastError = error;
  }

  resume(): void {
    this.#mode.desired('running');
  }

  setDesired(desired: DesiredConsumption): void {
    this.#mode.desired(desired);
  }

  state(): PipelineState {
    return {
      running: true,
      paused: !this.#mode.fetching,
      pauseReasons: this.#mode.pauseReasons,
      desired: this.#mode.desiredState,
      phase: this.#mode.phase(this.commandsInFlight),
      partitions: this.partitions,
      envelopesInFlight: this.envelopesInFlight,
      envelopesQueued: this.envelopesQueued,
      commandsInFlight: this.commandsInFlight,
      ...(this.#lastError === undefined ? {} : { lastError: this.#lastError }),
    };
  }
}
