/**
 * The urgent lane seen from the main thread: a worker thread runs its pipeline
 * (urgent-lane-worker.ts), and this class steers it as the bulk lane's pipeline is
 * steered. On one event loop the urgent commands waited behind the bulk lane's work
 * (decoding fetches of thousands of records, encoding their results); on a loop of their
 * own they wait only for their own.
 *
 * `state()` is synchronous for the admin API and readiness: it answers the state the
 * worker last posted (at most a few hundred ms old), with an operator's pause, resume or
 * desired state applied at once.
 */
import { extname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Config } from '../config/config.ts';
import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { MetricJson } from '../observability/metrics-merge.ts';
import type { DesiredConsumption } from '../pipeline/consumption-mode.ts';
import type { PipelineControl, PipelineState } from '../pipeline/pipeline-control.ts';
import type { RetryAfterHold } from '../pipeline/retry-after-hold.ts';
import {
  deserializeError,
  type LaneRequest,
  type UrgentLaneWorkerData,
  type WorkerMessage,
} from './protocol.ts';

export interface UrgentLaneThreadOptions {
  readonly config: Config;
  readonly logger: Logger;
  /** Where the worker's log lines are written: the main logger's destination. */
  readonly writeLogLine: (line: string) => void;
  /** The main thread's Retry-After hold: each thread's holds apply to the other too. */
  readonly retryAfterHold: RetryAfterHold;
  /** The lane stopped for good (its consumer crashed, or the thread died). */
  readonly onCrash: (error: Error) => void;
}

const workerFile = new URL(
  `./urgent-lane-worker${extname(fileURLToPath(import.meta.url))}`,
  import.meta.url,
);

function initialState(desired: DesiredConsumption): PipelineState {
  return {
    running: false,
    paused: false,
    pauseReasons: [],
    partitions: [],
    envelopesInFlight: 0,
    envelopesQueued: 0,
    commandsInFlight: 0,
    desired,
    phase: 'running',
  };
}

export class UrgentLaneThread implements PipelineControl {
  readonly #options: UrgentLaneThreadOptions;
  readonly #log: Logger;
  #worker: Worker | undefined;
  #nextId = 1;
  readonly #pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void }
  >();
  #state: PipelineState = initialState('running');
  #running = false;
  /** Started once: a crash after this ends the process; one before it fails the start. */
  #started = false;
  #stopping = false;

  constructor(options: UrgentLaneThreadOptions) {
    this.#options = options;
    this.#log = options.logger.child({ component: 'urgent-lane-thread' });
  }

  get running(): boolean {
    return this.#running && this.#worker !== undefined;
  }

  /** Starts the thread and its pipeline. @throws FerryError as the lane's start would. */
  async start(): Promise<void> {
    if (this.#worker) return;
    const { config, logger, retryAfterHold } = this.#options;
    const workerData: UrgentLaneWorkerData = { config, logLevel: logger.level };
    const worker = new Worker(workerFile, { workerData, name: 'ferry-urgent-lane' });
    this.#worker = worker;
    worker.on('message', (message: WorkerMessage) => this.#onMessage(message));
    worker.on('error', (error) => this.#died(error));
    worker.on('exit', (code) => {
      if (!this.#stopping) this.#died(new Error(`the urgent lane's thread exited (code ${code})`));
    });
    retryAfterHold.onLengthened((remainingMs) => worker.postMessage({ op: 'hold', remainingMs }));
    await this.#request({ op: 'start' });
    this.#started = true;
  }

  /** Drains the lane within `graceMs` and ends its thread. @returns true when it drained. */
  async stop(graceMs: number): Promise<boolean> {
    const worker = this.#worker;
    if (!worker || this.#stopping) return true;
    this.#stopping = true;
    try {
      return (await this.#request({ op: 'stop', graceMs })) === true;
    } catch (error: unknown) {
      this.#log.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'stop failed',
      );
      return false;
    } finally {
      this.#running = false;
      await worker.terminate();
      this.#worker = undefined;
    }
  }

  pause(reason: 'operator'): void {
    const reasons = new Set([...this.#state.pauseReasons, reason]);
    this.#state = { ...this.#state, paused: true, pauseReasons: [...reasons] };
    this.#send({ op: 'pause' });
  }

  resume(): void {
    this.#state = { ...this.#state, paused: false, pauseReasons: [] };
    this.#send({ op: 'resume' });
  }

  setDesired(desired: DesiredConsumption): void {
    this.#state = { ...this.#state, desired };
    this.#send({ op: 'setDesired', desired });
  }

  state(): PipelineState {
    return this.#state;
  }

  /** The lane's metrics, for the process's `/metrics`; none while the thread is not up. */
  async metrics(): Promise<MetricJson[]> {
    if (!this.#worker || this.#stopping) return [];
    return (await this.#request({ op: 'metrics' })) as MetricJson[];
  }

  /** A request whose answer nobody waits for; a failure is logged. */
  #send(request: LaneRequest): void {
    if (!this.#worker || this.#stopping) return;
    this.#request(request).catch((error: unknown) =>
      this.#log.warn(
        { op: request.op, err: error instanceof Error ? error.message : String(error) },
        'the urgent lane refused a request',
      ),
    );
  }

  #request(request: LaneRequest): Promise<unknown> {
    const worker = this.#worker;
    if (!worker)
      return Promise.reject(new FerryError('illegal_state', 'the urgent lane is not running'));
    const id = this.#nextId++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      worker.postMessage({ ...request, id });
    });
  }

  #onMessage(message: WorkerMessage): void {
    switch (message.kind) {
      case 'answer':
      case 'failed': {
        const pending = this.#pending.get(message.id);
        this.#pending.delete(message.id);
        if (message.kind === 'answer') pending?.resolve(message.value);
        else pending?.reject(deserializeError(message.error));
        return;
      }
      case 'state':
        this.#state = message.state;
        this.#running = message.running;
        return;
      case 'log':
        this.#options.writeLogLine(message.line);
        return;
      case 'hold':
        this.#options.retryAfterHold.mirror(message.remainingMs);
        return;
      case 'crash':
        this.#running = false;
        if (this.#started) this.#options.onCrash(deserializeError(message.error));
        else
          this.#log.error({ err: message.error.message }, 'the urgent lane stopped while starting');
        return;
    }
  }

  /** The thread itself failed: every request in flight fails, and the lane is lost. */
  #died(error: Error): void {
    this.#running = false;
    this.#worker = undefined;
    for (const pending of this.#pending.values()) pending.reject(error);
    this.#pending.clear();
    if (this.#started && !this.#stopping) this.#options.onCrash(error);
  }
}
