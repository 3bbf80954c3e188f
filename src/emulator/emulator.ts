import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { performance } from 'node:perf_hooks';
import type { Transport } from '../contract/index.ts';
import { FerryError } from '../errors.ts';
import { AnswerTimes, type AnswerTimesStats } from './answer-times.ts';
import { CallbackSender, type CallbackSenderOptions } from './callback-sender.ts';
import { handleControlRequest } from './control-route.ts';
import { type EnvelopeAnswer, Gateway } from './gateway.ts';
import { isJsonContentType, readBody, writeBody, writeJson } from './http-io.ts';
import {
  applyKnobs,
  defaultKnobs,
  type EmulatorKnobs,
  type RequestFault,
  requestFaultKnobs,
} from './knobs.ts';
import { createRandom, type Random } from './random.ts';

export type { EmulatorKnobs } from './knobs.ts';

/** Paths of the two endpoints (spec: Endpoints). */
export const SYNC_PATH = '/api/json.php';
export const ASYNC_PATH = '/v1/json';
/** Prefix of the control route (tests and demos; loopback only). */
export const CONTROL_PREFIX = '/__emulator/';

/** Top-level error of a request without `Content-Type: application/json` (the spec does not show this answer). */
export const WRONG_CONTENT_TYPE = 'Content-Type must be application/json';

/** Options of an emulator. Defaults in brackets. */
export interface EmulatorOptions {
  /** The account key that `auth` must equal. */
  apiKey: string;
  /** Port to listen on [0: any free port]. */
  port?: number;
  /** Address to listen on ['127.0.0.1']. */
  host?: string;
  /** The account's alpha-names; any other `*_signature` fails with `Error in Alpha-name` [['ferry', 'Acme']]. */
  senders?: readonly string[];
  /** Starting balance in currency units [1_000_000]. */
  initialBalance?: number;
  /** Currency code of the balance ['EUR']. */
  currency?: string;
  /** Price of one billed part in currency units [0.01]. */
  pricePerPart?: number;
  /** Account notification address: where `pipeline` statuses go (spec: pipeline rule 2) [none: not sent]. */
  notificationUrl?: string;
  /** Initial knobs (see EmulatorKnobs) [defaultKnobs]. */
  knobs?: Partial<EmulatorKnobs>;
  /** Seed of the randomness (faults, outcomes, codes), for repeatable runs [random]. */
  seed?: number;
  /** Largest request body accepted; larger gets HTTP 413 [16 MiB]. */
  maxBodyBytes?: number;
  /** Accepted messages kept for the `status` view, oldest dropped first [1_000_000]. */
  maxMessages?: number;
  /** Callback delivery tuning (concurrency, attempts, back-off). */
  callbacks?: CallbackSenderOptions;
}

/** What the emulator received and did since start or the last reset. */
export interface EmulatorStats {
  /** HTTP requests to the two endpoints (control route excluded), faults included. */
  requests: number;
  /** Envelopes that passed the key and shape checks, per endpoint. */
  envelopes: { sync: number; async: number };
  /** Operations in those envelopes. */
  operations: number;
  /** Messages accepted (given a `msg_id`), with or without an `id`. */
  acceptedMessages: number;
  /** Accepted sends per client `id` (as a string). */
  sendsById: Record<string, number>;
  /** Ids accepted more than once. */
  duplicates: string[];
  /** `status` operations received per client `id` (as a string): lookups of a command. */
  statusLookupsById: Record<string, number>;
  /** Request-level faults injected, and async requests refused. */
  faults: Record<RequestFault, number> & { asyncRefused: number };
  /** Callbacks the fault knobs dropped (never sent), sent twice, and sent late. */
  callbacksDropped: number;
  callbacksDuplicated: number;
  callbacksLate: number;
  /** Callbacks acknowledged with HTTP 200, given up, and still to deliver. */
  callbacksSent: number;
  callbacksFailed: number;
  callbacksPending: number;
  /** Delivery attempts the receiver did not acknowledge (an answer other than 200, none in time, no connection). */
  callbacksFailedAttempts: number;
  /** Of those, attempts the receiver took and did not answer within the sender's timeout. */
  callbacksTimedOutAttempts: number;
  /** Current balance in currency units. */
  balance: number;
  /** The emulator's own answer times of accepted envelopes, and its event-loop delay. */
  answerTimes: AnswerTimesStats;
}

type State = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped';

/**
 * The gateway emulator: an HTTP server implementing the gateway API (docs/gateway-api.md; both
 * endpoints, every operation type, status callbacks) with fault knobs, and a
 * control route under `/__emulator/`. Start it once, stop it once.
 */
export class Emulator {
  readonly #host: string;
  readonly #requestedPort: number;
  readonly #maxBodyBytes: number;
  readonly #random: Random;
  readonly #callbacks: CallbackSender;
  readonly #gateway: Gateway;
  readonly #server: Server;
  readonly #timers = new Set<NodeJS.Timeout>();
  readonly #answerTimes = new AnswerTimes();
  #state: State = 'idle';
  #port = 0;
  #requests = 0;
  #faults = freshFaults();

  /** @throws FerryError 'config' when a knob or option is invalid. */
  constructor(options: EmulatorOptions) {
    if (typeof options.apiKey !== 'string' || options.apiKey === '') {
      throw new FerryError('config', 'apiKey: must be a non-empty string', { retryable: false });
    }
    this.#host = options.host ?? '127.0.0.1';
    this.#requestedPort = options.port ?? 0;
    this.#maxBodyBytes = options.maxBodyBytes ?? 16 * 1024 * 1024;
    this.#random = createRandom(options.seed);
    this.#callbacks = new CallbackSender(options.callbacks);
    this.#gateway = new Gateway({
      apiKey: options.apiKey,
      senders: options.senders ?? ['ferry', 'Acme'],
      initialBalance: options.initialBalance ?? 1_000_000,
      currency: options.currency ?? 'EUR',
      pricePerPart: options.pricePerPart ?? 0.01,
      notificationUrl: options.notificationUrl,
      maxMessages: options.maxMessages ?? 1_000_000,
      knobs: applyKnobs(defaultKnobs, options.knobs ?? {}),
      random: this.#random,
      callbacks: this.#callbacks,
    });
    this.#server = createServer({ keepAlive: true }, (request, response) => {
      this.#handle(request, response).catch(() => {
        if (!response.headersSent) writeBody(response, 500, '{"error":"Internal Server Error"}');
      });
    });
    // Longer than common client keep-alive timeouts (undici: 4 s), so the client closes idle sockets first.
    this.#server.keepAliveTimeout = 65_000;
    this.#server.headersTimeout = 66_000;
    this.#server.requestTimeout = 0;
  }

  /** Starts listening. Idempotent while running. @throws FerryError 'illegal_state' after stop. */
  async start(): Promise<void> {
    if (this.#state === 'running' || this.#state === 'starting') return;
    if (this.#state !== 'idle')
      throw new FerryError('illegal_state', 'emulator: cannot start after stop');
    this.#state = 'starting';
    await new Promise<void>((resolve, reject) => {
      this.#server.once('error', reject);
      this.#server.listen(this.#requestedPort, this.#host, () => {
        this.#server.off('error', reject);
        resolve();
      });
    });
    this.#port = (this.#server.address() as AddressInfo).port;
    this.#state = 'running';
  }

  /** Stops: closes every connection (held ones too), drops pending answers and callbacks. Idempotent. */
  async stop(): Promise<void> {
    if (this.#state === 'stopped' || this.#state === 'stopping') return;
    const wasListening = this.#state === 'running';
    this.#state = 'stopping';
    for (const timer of this.#timers) clearTimeout(timer);
    this.#timers.clear();
    if (wasListening) {
      const closed = new Promise<void>((resolve) => this.#server.close(() => resolve()));
      this.#server.closeAllConnections();
      await closed;
    }
    await this.#callbacks.close();
    this.#answerTimes.close();
    this.#state = 'stopped';
  }

  /** Base URL, e.g. `http://127.0.0.1:8090` (both `{base_url}` and `{async_url}`). @throws FerryError 'illegal_state' before start. */
  get url(): string {
    const host = this.#host.includes(':') ? `[${this.#host}]` : this.#host;
    return `http://${host}:${this.port}`;
  }

  /** The port listened on. @throws FerryError 'illegal_state' before start. */
  get port(): number {
    if (this.#port === 0) throw new FerryError('illegal_state', 'emulator: not started');
    return this.#port;
  }

  /** The knobs in force. */
  get knobs(): Readonly<EmulatorKnobs> {
    return this.#gateway.knobs;
  }

  /** Changes some knobs at once. @throws FerryError 'config' naming the knob; nothing changes then. */
  setKnobs(knobs: Partial<EmulatorKnobs>): void {
    this.#gateway.setKnobs(knobs);
  }

  /** Holds (`true`) or releases (`false`) every status callback that comes due (CallbackSender.hold). */
  holdCallbacks(held: boolean): void {
    if (held) this.#callbacks.hold();
    else this.#callbacks.release();
  }

  /** Changes the account key (e.g. to test `Access denied` and recovery). */
  setApiKey(apiKey: string): void {
    if (apiKey === '')
      throw new FerryError('config', 'apiKey: must be a non-empty string', { retryable: false });
    this.#gateway.setApiKey(apiKey);
  }

  /** What was received and done since start or the last reset. */
  stats(options: { withSendsById?: boolean } = {}): EmulatorStats {
    const counts = this.#gateway.counts();
    const callbacks = this.#callbacks.stats();
    return {
      requests: this.#requests,
      envelopes: { ...counts.envelopes },
      operations: counts.operations,
      acceptedMessages: counts.acceptedMessages,
      sendsById: options.withSendsById === false ? {} : this.#gateway.ledger.sendsById(),
      duplicates: this.#gateway.ledger.duplicates(),
      statusLookupsById: options.withSendsById === false ? {} : this.#gateway.statusLookupsById(),
      faults: { ...this.#faults, asyncRefused: counts.asyncRefused },
      callbacksDropped: counts.callbacksDropped,
      callbacksDuplicated: counts.callbacksDuplicated,
      callbacksLate: counts.callbacksLate,
      callbacksSent: callbacks.sent,
      callbacksFailed: callbacks.failed,
      callbacksPending: callbacks.pending,
      callbacksFailedAttempts: callbacks.failedAttempts,
      callbacksTimedOutAttempts: callbacks.timedOutAttempts,
      balance: this.#gateway.account.balance,
      answerTimes: this.#answerTimes.stats(),
    };
  }

  /**
   * Forgets what was received (counts, messages, templates), restores the balance, and drops
   * callbacks not sent yet. Knobs and the key stay as they are.
   */
  reset(): void {
    this.#requests = 0;
    this.#faults = freshFaults();
    this.#answerTimes.reset();
    this.#gateway.reset();
    this.#callbacks.reset();
  }

  /** Resolves true once no callback is scheduled, queued or in flight, false after `timeoutMs`. */
  whenCallbacksIdle(timeoutMs: number): Promise<boolean> {
    return this.#callbacks.whenIdle(timeoutMs);
  }

  async #handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    const arrivedAtMs = performance.now();
    const rawUrl = request.url ?? '/';
    const queryAt = rawUrl.indexOf('?');
    const path = queryAt === -1 ? rawUrl : rawUrl.slice(0, queryAt);
    if (path.startsWith(CONTROL_PREFIX)) {
      await handleControlRequest(this, request, response, path, this.#maxBodyBytes);
      return;
    }
    const transport: Transport | undefined =
      path === SYNC_PATH ? 'sync' : path === ASYNC_PATH ? 'async' : undefined;
    if (transport === undefined) {
      request.resume();
      writeJson(response, 404, { success: false, error: 'Not Found' });
      return;
    }
    if (request.method !== 'POST') {
      request.resume();
      writeBody(
        response,
        405,
        JSON.stringify({ success: false, error: 'Method Not Allowed' }),
        'application/json',
        {
          allow: 'POST',
        },
      );
      return;
    }
    this.#requests += 1;
    const body = await readBody(request, this.#maxBodyBytes);
    if (body === undefined) {
      writeBody(
        response,
        413,
        JSON.stringify({ success: false, error: 'Payload Too Large' }),
        'application/json',
        {
          connection: 'close',
        },
      );
      return;
    }
    const knobs = this.#gateway.knobs;
    // spec: Endpoints — without the JSON content type the request is invalid even if the JSON is valid.
    if (!isJsonContentType(request.headers['content-type'])) {
      this.#answerLater(knobs.latencyMs, () =>
        writeJson(response, 200, { success: false, error: WRONG_CONTENT_TYPE }),
      );
      return;
    }
    const fault = this.#drawFault(knobs);
    if (fault !== undefined) this.#faults[fault] += 1;
    if (fault === 'http500Rate') {
      this.#answerLater(knobs.latencyMs, () =>
        writeBody(response, 500, '{"error":"Internal Server Error"}'),
      );
      return;
    }
    if (fault === 'http429Rate' || fault === 'http503Rate') {
      const [status, text] =
        fault === 'http429Rate' ? [429, 'Too Many Requests'] : [503, 'Service Unavailable'];
      const retryAfter =
        knobs.retryAfterMs > 0
          ? { 'retry-after': String(Math.ceil(knobs.retryAfterMs / 1000)) }
          : {};
      this.#answerLater(knobs.latencyMs, () =>
        writeBody(
          response,
          status,
          JSON.stringify({ error: text }),
          'application/json',
          retryAfter,
        ),
      );
      return;
    }
    if (fault === 'timeoutRate') {
      this.#answerLater(knobs.hangMs, () => request.socket.destroy());
      return;
    }
    const refuse = transport === 'async' && this.#random() < knobs.asyncRefuseRate;
    const answer = this.#gateway.handleEnvelope(transport, body, Date.now(), refuse);
    switch (fault) {
      case 'lostAnswerRate':
        // Processed, then the connection drops before any answer byte: the client cannot know
        // the request was carried out.
        this.#answerLater(knobs.latencyMs, () => request.socket.destroy());
        return;
      case 'slowAnswerRate':
        this.#answerLater(knobs.latencyMs + knobs.slowAnswerMs, () =>
          writeBody(response, 200, serializeAnswer(answer, false)),
        );
        return;
      case 'malformedRate': {
        // A truncated answer: a strict prefix of a JSON object is never valid JSON.
        const full = serializeAnswer(answer, false);
        this.#answerLater(knobs.latencyMs, () =>
          writeBody(response, 200, full.slice(0, Math.max(1, Math.floor(full.length / 2)))),
        );
        return;
      }
      default:
        if (answer.kind === 'items') {
          const operations = answer.items.length;
          response.once('finish', () =>
            this.#answerTimes.record(operations, performance.now() - arrivedAtMs),
          );
        }
        this.#answerLater(knobs.latencyMs, () =>
          writeBody(response, 200, serializeAnswer(answer, fault === 'missingItemRate')),
        );
    }
  }

  /** One draw per request over the exclusive fault rates (their sum is at most 1). */
  #drawFault(knobs: Readonly<EmulatorKnobs>): RequestFault | undefined {
    let total = 0;
    for (const name of requestFaultKnobs) total += knobs[name];
    if (total === 0) return undefined;
    const draw = this.#random();
    let threshold = 0;
    for (const name of requestFaultKnobs) {
      threshold += knobs[name];
      if (draw < threshold) return name;
    }
    return undefined;
  }

  /** Runs `answer` after `delayMs` (at once when 0); pending ones are dropped by stop(). */
  #answerLater(delayMs: number, answer: () => void): void {
    if (delayMs <= 0) {
      answer();
      return;
    }
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      answer();
    }, delayMs);
    this.#timers.add(timer);
  }
}

/** Creates an emulator (not started). @throws FerryError 'config' for an invalid option or knob. */
export function createEmulator(options: EmulatorOptions): Emulator {
  return new Emulator(options);
}

/** The response body of an envelope (spec: Response envelope, Async response). */
export function serializeAnswer(answer: EnvelopeAnswer, dropLastItem: boolean): string {
  switch (answer.kind) {
    case 'rejected':
      // spec: Errors — top-level success false with `error`, no `data`.
      return JSON.stringify({ success: false, error: answer.error });
    case 'queued':
      return JSON.stringify({ success: true, request_id: answer.requestId });
    case 'items': {
      const items = dropLastItem ? answer.items.slice(0, -1) : answer.items;
      return JSON.stringify({ success: true, data: items });
    }
  }
}

function freshFaults(): Record<RequestFault, number> {
  return {
    http500Rate: 0,
    http429Rate: 0,
    http503Rate: 0,
    timeoutRate: 0,
    lostAnswerRate: 0,
    slowAnswerRate: 0,
    malformedRate: 0,
    missingItemRate: 0,
  };
}
