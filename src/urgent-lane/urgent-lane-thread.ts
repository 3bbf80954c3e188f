/**
 * The urgent lane seen from the main thread: a worker thread runs its pipeline
 * (urgent-lane-worker.ts), and this class steers it as the bulk lane's pipeline is
 * steered. On one event loop the urgent commands waited behind the bulk lane's work
 * (decoding fetches of thousands of records, encoding their results); on a loop of their
 * own they wait only for their own.
 *
 * `state()` is synchronous for the admin API, the fleet and readiness: it answers the
 * state the worker last posted (at most a few hundred ms old), with the operator's desired
 * state applied at once by the same rules the pipeline applies (ConsumptionMode). A state
 * the worker built before it took the latest desired state is dropped, so a steer never
 * seems undone. The desired state set before the thread starts (the fleet's, applied
 * before any fetch) goes to the worker ahead of its start.
 */
import { extname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Config } from '../config/config.ts';
import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { MetricJson } from '../observability/metrics-merge.ts';
import { ConsumptionMode, type DesiredConsumption } from '../pipeline/consumption-mode.ts';
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
  /** The lane stopped for good (its consumer crashed, or the thread died). Called once. */
  readonly onCrash: (error: Error) => void;
}

/** How long a scrape waits for the lane's metrics before it serves the last ones it got. */
const METRICS_WAIT_MS = 2_000;
/** Beyond the drain's grace, how long a stop waits for the thread before ending it. */
const STOP_MARGIN_MS = 10_000;

const workerFile = new URL(
  `./urgent-lane-worker${extname(fileURLToPath(import.meta.url))}`,
  import.meta.url,
);

function initialState(): PipelineState {
  return {
    running: false,
    paused: false,
    pauseReasons: [],
    partitions: [],
    envelopesInFlight: 0,
    envelopesQueued: 0,
    commandsInFlight: 0,
    desired: 'running',
    phase: 'running',
  };
}

interface Pending {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: Error) => void;
}

export class UrgentLaneThread implements PipelineControl {
  readonly #options: UrgentLaneThreadOptions;
  readonly #log: Logger;
  #worker: Worker | undefined;
  #nextId = 1;
  readonly #pending = new Map<number, Pending>();
  #state: PipelineState = initialState();
  #desired: DesiredConsumption = 'running';
  /** The id of the last desired state sent: a state the worker built before it is stale. */
  #lastSteerId = 0;
  #running = false;
  #takenOver = false;
  /** Started once: a crash after this ends the process; one before it fails the start. */
  #started = false;
  #stopping = false;
  #crashed = false;
  /** The lane's metrics as last read: served while the thread cannot answer, so counters never drop. */
  #lastMetrics: MetricJson[] = [];

  constructor(options: UrgentLaneThreadOptions) {
    this.#options = options;
    this.#log = options.logger.child({ component: 'urgent-lane-thread' });
  }

  get takenOver(): boolean {
    return this.#takenOver && this.#worker !== undefined;
  }

  get running(): boolean {
    return this.#running && this.#worker !== undefined;
  }

  /** Starts the thread and its pipeline. @throws FerryError as the lane's start would. */
  async start(): Promise<void> {
    if (this.#worker || this.#stopping) return;
    const { config, logger, retryAfterHold } = this.#options;
    const workerData: UrgentLaneWorkerData = { config, logLevel: logger.level };
    const worker = new Worker(workerFile, { workerData, name: 'ferry-urgent-lane' });
    this.#worker = worker;
    worker.on('message', (message: WorkerMessage) => this.#onMessage(message));
    worker.on('error', (error) => this.#died(error));
    worker.on('exit', (code) =>
      this.#died(new Error(`the urgent lane's thread exited (code ${code})`)),
    );
    retryAfterHold.onLengthened((remainingMs) => worker.postMessage({ op: 'hold', remainingMs }));
    // Ahead of the start: a paused or draining fleet's lane starts paused or draining.
    this.#steer(this.#desired);
    try {
      await this.#request({ op: 'start' });
    } catch (error: unknown) {
      await this.#end(worker, 'the urgent lane did not start');
      throw error;
    }
    this.#started = true;
  }

  /** Drains the lane within `graceMs` and ends its thread. @returns true when it drained. */
  async stop(graceMs: number): Promise<boolean> {
    const worker = this.#worker;
    if (!worker || this.#stopping) return true;
    this.#stopping = true;
    try {
      const answer = await Promise.race([
        this.#request({ op: 'stop', graceMs }),
        sleep(graceMs + STOP_MARGIN_MS, 'timed out', { ref: false }),
      ]);
      if (answer === 'timed out')
        this.#log.warn({ graceMs }, 'the urgent lane did not stop in time');
      return answer === true;
    } catch (error: unknown) {
      this.#log.warn(
        { err: error instanceof Error ? error.message : String(error) },
        'stop failed',
      );
      return false;
    } finally {
      await this.#end(worker, 'the urgent lane stopped');
    }
  }

  pause(_reason: 'operator'): void {
    this.setDesired('paused');
  }

  resume(): void {
    this.setDesired('running');
  }

  setDesired(desired: DesiredConsumption): void {
    this.#desired = desired;
    // The same rules the lane's pipeline applies; an `Access denied` stop it reported holds
    // through a pause only, as there.
    const mode = new ConsumptionMode();
    if (this.#state.pauseReasons.includes('access_denied')) {
      mode.accessDenied(this.#state.lastError ?? 'access denied');
    }
    mode.desired(desired);
    this.#state = {
      ...this.#state,
      desired,
      paused: !mode.fetching,
      pauseReasons: mode.pauseReasons,
      phase: mode.phase(this.#state.commandsInFlight),
    };
    if (this.#worker && !this.#stopping) this.#steer(desired);
  }

  state(): PipelineState {
    return this.#state;
  }

  /**
   * The lane's metrics, for the process's `/metrics`. While the thread cannot answer in
   * time (stopping, stopped, busy) the last ones read are served instead.
   */
  async metrics(): Promise<MetricJson[]> {
    if (!this.#worker || this.#stopping) return this.#lastMetrics;
    const answer = await Promise.race([
      this.#request({ op: 'metrics' }).catch(() => undefined),
      sleep(METRICS_WAIT_MS, undefined, { ref: false }),
    ]);
    if (Array.isArray(answer)) this.#lastMetrics = answer as MetricJson[];
    return this.#lastMetrics;
  }

  #steer(desired: DesiredConsumption): void {
    const worker = this.#worker;
    if (!worker) return;
    const id = this.#nextId++;
    this.#lastSteerId = id;
    // Answered like any request; nobody waits for it.
    this.#pending.set(id, {
      resolve: () => undefined,
      reject: (error) =>
        this.#log.warn({ desired, err: error.message }, 'the urgent lane refused a desired state'),
    });
    worker.postMessage({ op: 'setDesired', desired, id });
  }

  #request(request: LaneRequest): Promise<unknown> {
    const worker = this.#worker;
    if (!worker) {
      return Promise.reject(new FerryError('illegal_state', 'the urgent lane is not running'));
    }
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
        // Built before the worker took the latest desired state: what it shows is undone.
        if (message.handled < this.#lastSteerId) return;
        this.#state = message.state;
        this.#running = message.running;
        this.#takenOver = message.takenOver;
        return;
      case 'log':
        this.#options.writeLogLine(message.line);
        return;
      case 'hold':
        this.#options.retryAfterHold.mirror(message.remainingMs);
        return;
      case 'crash':
        this.#running = false;
        if (this.#started) this.#crash(deserializeError(message.error));
        else
          this.#log.error({ err: message.error.message }, 'the urgent lane stopped while starting');
        return;
    }
  }

  /** Ends the thread and fails whatever still waits for it. */
  async #end(worker: Worker, why: string): Promise<void> {
    this.#running = false;
    this.#stopping = true;
    await worker.terminate();
    if (this.#worker === worker) this.#worker = undefined;
    this.#failPending(new FerryError('illegal_state', why));
  }

  /** The thread failed or exited: every request in flight fails; unless stopping, the lane is lost. */
  #died(error: Error): void {
    this.#running = false;
    this.#worker = undefined;
    this.#failPending(error);
    if (this.#started && !this.#stopping) this.#crash(error);
  }

  #failPending(error: Error): void {
    const pending = [...this.#pending.values()];
    this.#pending.clear();
    for (const request of pending) request.reject(error);
  }

  #crash(error: Error): void {
    if (this.#crashed) return;
    this.#crashed = true;
    this.#options.onCrash(error);
  }
}
