/**
 * `POST /callbacks/{token}`: the gateway's status callbacks (spec: Events) become status events
 * on `ferry.status` (docs/callbacks.md). Any callback with the right token is kept: one that
 * can be understood (callback-body.ts, status-normalise.ts) as a status event, any other raw
 * on the unparsed-callbacks topic (unparsed-callback.ts). The answer 200 is sent only after
 * Kafka acknowledged the record; while Kafka is unavailable the answer is 503, so a gateway
 * that retries loses nothing. Whatever a caller sends gets an answer and never stops the process.
 */

import { hash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FerryError } from '../errors.ts';
import type { UnreadBody } from '../http/early-answer.ts';
import { type HttpServer, sendJson, sendNotFound } from '../http/http-server.ts';
import { channelOfCallback } from '../observability/channels.ts';
import { LogSampler } from '../observability/log-sampler.ts';
import type { Logger } from '../observability/logger.ts';
import {
  boundedStatusLabel,
  type CallbackOutcome,
  type FerryMetrics,
} from '../observability/metrics.ts';
import { carriedInQuery, requestQuery } from '../observability/propagated-headers.ts';
import { type CallbackProducer, CallbackWriter, type PreparedWrite } from './callback-writer.ts';
import { CALLBACK_ROUTE } from './hook-injection.ts';
import type { PublishOutcome } from './publish-once.ts';
import { readRequestBody } from './request-body.ts';
import { type TrackingTopics, trackingTargetOf } from './tracking-target.ts';

/** What the receiver needs of a producer: `send` resolves once Kafka acknowledged every record. */
export type StatusEventProducer = CallbackProducer;

/** Settings for {@link CallbackReceiver}. */
export interface CallbackReceiverOptions {
  /** The shared HTTP server; the route is added by start(), which must precede its start. */
  readonly server: HttpServer;
  /** Connected by the caller, who also disconnects it (the receiver only sends). */
  readonly producer: StatusEventProducer;
  /** Topic of the status events (FERRY_TOPIC_STATUS). */
  readonly statusTopic: string;
  /** Topic of the callbacks kept raw (FERRY_TOPIC_UNPARSED_CALLBACKS). */
  readonly unparsedTopic: string;
  /**
   * Lower-case names of the trace and correlation headers a callback URL's query may carry
   * back to its status event (FERRY_PROPAGATE_HEADERS; see hook-injection.ts). Default none.
   */
  readonly propagateHeaders?: readonly string[];
  /** The secret a callback URL must carry (FERRY_CALLBACK_TOKEN); not empty. */
  readonly token: string;
  readonly metrics: Pick<FerryMetrics, 'callbacks' | 'receipts'>;
  readonly logger: Logger;
  /** Largest body accepted, bytes; of a longer one this much is kept raw (413). Default 64 KiB. */
  readonly maxBodyBytes?: number;
  /** Deepest nesting of objects and arrays accepted. Default 32 (a callback needs 4). */
  readonly maxDepth?: number;
  /** Acknowledged callbacks remembered to recognise a repeat (per replica). Default 100000. */
  readonly dedupCapacity?: number;
  /** Longest wait for Kafka's acknowledgement before answering 503, ms. Default 10000. */
  readonly publishTimeoutMs?: number;
  /** Time allowed to receive the body once the headers arrived, ms. Default 10000. */
  readonly bodyTimeoutMs?: number;
  /** Seconds suggested in `Retry-After` of a 503. Default 5. */
  readonly retryAfterS?: number;
  /**
   * Final status tracking is on: a callback whose URL names a tracking partition is also
   * written there, before it is answered.
   */
  readonly tracking?: TrackingTopics | undefined;
}

type ReceiverState = 'idle' | 'running' | 'stopping' | 'stopped';

const DEFAULT_MAX_BODY_BYTES = 64 * 1024;
const DEFAULT_MAX_DEPTH = 32;
const DEFAULT_DEDUP_CAPACITY = 100_000;
const DEFAULT_PUBLISH_TIMEOUT_MS = 10_000;
const DEFAULT_BODY_TIMEOUT_MS = 10_000;
const DEFAULT_RETRY_AFTER_S = 5;

/** Receives status callbacks on the shared HTTP server and publishes them to Kafka. */
export class CallbackReceiver {
  readonly #options: CallbackReceiverOptions;
  readonly #logger: Logger;
  /**
   * The warnings and errors a request can cause go through this: a wrong token costs a
   * caller nothing, and every one is counted (`ferry_callbacks_total`) whatever is logged.
   */
  readonly #sampled: LogSampler;
  readonly #tokenDigest: Buffer;
  readonly #writer: CallbackWriter;
  readonly #maxBodyBytes: number;
  readonly #publishTimeoutMs: number;
  readonly #bodyTimeoutMs: number;
  readonly #retryAfterS: number;
  #state: ReceiverState = 'idle';
  #routed = false;
  #stopping: Promise<void> | undefined;

  /** @throws FerryError `config` when `token` is empty or a limit is not a positive integer. */
  constructor(options: CallbackReceiverOptions) {
    if (options.token === '') {
      throw new FerryError('config', 'token: must not be empty', { retryable: false });
    }
    this.#options = options;
    this.#logger = options.logger.child({ component: 'callbacks' });
    this.#sampled = new LogSampler({ logger: this.#logger });
    this.#tokenDigest = digest(options.token);
    this.#maxBodyBytes = positive('maxBodyBytes', options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES);
    this.#publishTimeoutMs = positive(
      'publishTimeoutMs',
      options.publishTimeoutMs ?? DEFAULT_PUBLISH_TIMEOUT_MS,
    );
    this.#bodyTimeoutMs = positive(
      'bodyTimeoutMs',
      options.bodyTimeoutMs ?? DEFAULT_BODY_TIMEOUT_MS,
    );
    this.#retryAfterS = positive('retryAfterS', options.retryAfterS ?? DEFAULT_RETRY_AFTER_S);
    this.#writer = new CallbackWriter({
      producer: options.producer,
      statusTopic: options.statusTopic,
      unparsedTopic: options.unparsedTopic,
      maxDepth: positive('maxDepth', options.maxDepth ?? DEFAULT_MAX_DEPTH),
      dedupCapacity: positive('dedupCapacity', options.dedupCapacity ?? DEFAULT_DEDUP_CAPACITY),
      publishTimeoutMs: this.#publishTimeoutMs,
    });
  }

  get state(): ReceiverState {
    return this.#state;
  }

  /**
   * Adds `POST /callbacks/:token` to the server (once) and starts accepting callbacks.
   * Idempotent. Call it before the server starts.
   * @throws FerryError `illegal_state` after stop(), or from the server when it already started.
   */
  start(): void {
    if (this.#state === 'running') return;
    if (this.#state !== 'idle') {
      throw new FerryError('illegal_state', 'the callback receiver was stopped');
    }
    if (!this.#routed) {
      this.#options.server.route(
        'POST',
        CALLBACK_ROUTE,
        (req, res, params) => this.#handle(req, res, params.token ?? ''),
        // Another method gets 405 only with the right token: without it, the 404 of any
        // unknown path, so the route does not show itself.
        { visibleTo: (params) => this.#tokenMatches(params.token ?? '') },
      );
      this.#routed = true;
    }
    this.#state = 'running';
  }

  /**
   * Refuses new callbacks (503, so the gateway retries later or elsewhere) and waits for the
   * publishes in flight to settle, at most `publishTimeoutMs`. Idempotent. Does not disconnect
   * the producer or stop the server: their owner does, after this resolves.
   */
  stop(): Promise<void> {
    if (this.#state === 'idle') {
      this.#state = 'stopped';
      return Promise.resolve();
    }
    this.#stopping ??= (async () => {
      this.#state = 'stopping';
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        this.#writer.settled(),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, this.#publishTimeoutMs);
        }),
      ]);
      clearTimeout(timer);
      const { writes, records } = this.#writer.batchStats;
      this.#logger.info(
        { writes, records },
        'The callback receiver stopped; its records went to Kafka in this many writes.',
      );
      this.#sampled.flush();
      this.#state = 'stopped';
    })();
    return this.#stopping;
  }

  /** Never throws: every path answers (or finds the caller gone) and counts the outcome. */
  async #handle(req: IncomingMessage, res: ServerResponse, token: string): Promise<void> {
    try {
      await this.#receive(req, res, token);
    } catch (error: unknown) {
      this.#logger.error({ err: error }, 'Handling a status callback failed.');
      this.#count(undefined, 'unavailable');
      if (!res.headersSent) this.#refuse(res, 503, 'internal error');
      else res.destroy();
    }
  }

  async #receive(req: IncomingMessage, res: ServerResponse, token: string): Promise<void> {
    if (!this.#tokenMatches(token)) {
      // The router's own 404, so a wrong token does not reveal that the route exists.
      sendNotFound(res);
      this.#count(undefined, 'unauthorized');
      this.#sampled.warn(
        'callback_wrong_token',
        { remoteAddress: req.socket.remoteAddress },
        'A status callback carried a wrong token.',
      );
      return;
    }
    if (this.#state !== 'running') {
      this.#unavailable(res, 'the receiver is stopping');
      return;
    }
    const allow = this.#options.propagateHeaders ?? [];
    // Read once, and only when something is to be found in it.
    const query =
      allow.length > 0 || this.#options.tracking !== undefined ? requestQuery(req.url) : undefined;
    const context = carriedInQuery(query, allow);
    const contentType = req.headers['content-type'];
    const body = await readRequestBody(req, {
      maxBytes: this.#maxBodyBytes,
      timeoutMs: this.#bodyTimeoutMs,
    });
    const receivedAt = new Date();
    if (!body.ok) {
      if (body.status === 'aborted') {
        this.#count(undefined, 'rejected');
        this.#logger.debug({ reason: body.reason }, 'A status callback was abandoned mid-body.');
        return;
      }
      if (body.status === 408) {
        // Closed at once: a sender too slow for the deadline gets no more time to drip.
        this.#reject(res, 408, body.reason, 'close');
        return;
      }
      // Over the limit: its beginning is kept, and the 413 says it was not taken whole.
      const kept = this.#writer.prepareRaw({
        bytes: body.prefix,
        contentType,
        reason: body.reason,
        receivedAt,
        truncated: true,
        declaredBytes: body.declaredBytes,
        context,
      });
      await this.#write(res, kept);
      return;
    }
    await this.#write(
      res,
      this.#writer.prepare({
        bytes: body.bytes,
        contentType,
        receivedAt,
        context,
        tracking: trackingTargetOf(query, this.#options.tracking),
      }),
    );
  }

  /** Writes and answers: 200 once Kafka has it (413 for a cut body), 503 when it did not take it. */
  async #write(res: ServerResponse, prepared: PreparedWrite): Promise<void> {
    let outcome: PublishOutcome;
    try {
      outcome = await this.#writer.write(prepared);
    } catch (error: unknown) {
      this.#unavailable(res, 'Kafka did not acknowledge the callback', error, prepared.status);
      return;
    }
    const duplicate = outcome === 'duplicate';
    if (prepared.kind === 'event') {
      sendJson(res, 200, duplicate ? { success: true, duplicate } : { success: true });
      this.#count(prepared.status, outcome);
      // A receipt counts once: a gateway's retry of one already written is not a new one.
      if (outcome === 'published') {
        this.#options.metrics.receipts.inc({ channel: channelOfCallback(prepared.type) });
      }
      this.#logger.debug(
        { key: prepared.key.key, keyField: prepared.key.field, outcome },
        'Status callback acknowledged.',
      );
      return;
    }
    if (prepared.truncated) {
      this.#refuse(res, 413, prepared.reason);
    } else {
      sendJson(res, 200, { success: true, unparsed: true, ...(duplicate ? { duplicate } : {}) });
    }
    this.#count(prepared.status, duplicate ? 'duplicate' : 'unparsed');
    // The reason names the problem only; bodies are not logged (they may hold texts).
    this.#sampled.warn(
      'callback_unparsed',
      { reason: prepared.reason, outcome },
      'A status callback is no status event; it was kept raw on the unparsed topic.',
    );
  }

  #tokenMatches(token: string): boolean {
    // Equal-length digests: the comparison time depends on neither token's content nor length.
    return timingSafeEqual(digest(token), this.#tokenDigest);
  }

  #reject(res: ServerResponse, httpStatus: number, reason: string, unread: UnreadBody): void {
    this.#refuse(res, httpStatus, reason, unread);
    this.#count(undefined, 'rejected');
    // The reason names the field and rule only; bodies are not logged (they may hold texts).
    this.#sampled.warn(
      'callback_refused',
      { httpStatus, reason },
      'A status callback was refused.',
    );
  }

  #unavailable(res: ServerResponse, reason: string, error?: unknown, status?: unknown): void {
    res.setHeader('Retry-After', String(this.#retryAfterS));
    this.#refuse(res, 503, reason);
    this.#count(status, 'unavailable');
    this.#sampled.error(
      'callback_unavailable',
      error === undefined ? { reason } : { reason, err: error },
      'A status callback could not be published; the gateway must retry it.',
    );
  }

  /**
   * A request refused before its body was read to the end (a 413, a 503 while stopping) has
   * its connection closed after the answer: by default once the rest of the body was read
   * and dropped within the server's bounds, so that the sender sees the answer.
   */
  #refuse(
    res: ServerResponse,
    httpStatus: number,
    reason: string,
    unread: UnreadBody = 'discard',
  ): void {
    sendJson(res, httpStatus, { success: false, error: reason }, unread);
  }

  #count(status: unknown, outcome: CallbackOutcome): void {
    this.#options.metrics.callbacks.inc({ status: boundedStatusLabel(status), outcome });
  }
}

function digest(value: string): Buffer {
  return hash('sha256', value, 'buffer');
}

function positive(name: string, value: number): number {
  if (!Number.isInteger(value) || value < 1) {
    throw new FerryError('config', `${name}: must be a positive integer`, { retryable: false });
  }
  return value;
}
