/**
 * Test helpers for the callback receiver: a receiver on a real HTTP server (port 0) publishing
 * to a fresh topic of a real broker, a read_committed collector of that topic, and a raw HTTP
 * client that can send what a well-behaved client would not.
 */
import { request } from 'node:http';
import type { TestContext } from 'node:test';
import {
  CallbackReceiver,
  type CallbackReceiverOptions,
} from '../../src/callbacks/callback-receiver.ts';
import { HttpServer } from '../../src/http/http-server.ts';
import {
  type InboundRecord,
  KafkaClient,
  type RecordConsumer,
  type RecordProducer,
} from '../../src/kafka/kafka-client.ts';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import { createMetrics, type FerryMetrics } from '../../src/observability/metrics.ts';
import { uniqueTopic } from '../helpers/kafka.ts';

/**
 * Teardown steps run last-registered first, in one `t.after` (node:test runs several `after`
 * hooks in registration order, which would stop a broker before its clients).
 */
export class CleanupStack {
  readonly #steps: (() => unknown)[] = [];
  constructor(t: TestContext) {
    t.after(async () => {
      while (this.#steps.length > 0) await this.#steps.pop()?.();
    });
  }
  defer(step: () => unknown): void {
    this.#steps.push(step);
  }
}

export const TEST_TOKEN = 'test-token/with spaces?&';

export interface StatusEvent {
  readonly key: string | null;
  readonly value: Record<string, unknown>;
  readonly offset: string;
}

/** Collects the records of one topic at read_committed, in order. */
export class StatusCollector {
  readonly events: StatusEvent[] = [];
  readonly #consumer: RecordConsumer;
  readonly #waiters = new Set<() => void>();

  constructor(consumer: RecordConsumer) {
    this.#consumer = consumer;
  }

  async start(): Promise<void> {
    await this.#consumer.start((record: InboundRecord) => {
      this.events.push({
        key: record.key === null ? null : record.key.toString('utf8'),
        value: JSON.parse(record.value?.toString('utf8') ?? 'null') as Record<string, unknown>,
        offset: record.offset,
      });
      for (const wake of this.#waiters) wake();
    });
  }

  /** Resolves once at least `count` events arrived. @throws after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 30_000): Promise<StatusEvent[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.events.length < count) {
      const remaining = deadline - Date.now();
      if (remaining <= 0) {
        throw new Error(`expected ${count} status events, got ${this.events.length}`);
      }
      await new Promise<void>((resolve) => {
        const wake = () => {
          clearTimeout(timer);
          this.#waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.min(remaining, 200));
        this.#waiters.add(wake);
      });
    }
    return this.events;
  }

  async stop(): Promise<void> {
    await this.#consumer.stop();
  }
}

/** Collects the records of one topic as they are (value bytes and headers), in order. */
export class RawCollector {
  readonly records: InboundRecord[] = [];
  readonly #consumer: RecordConsumer;

  constructor(consumer: RecordConsumer) {
    this.#consumer = consumer;
  }

  async start(): Promise<void> {
    await this.#consumer.start((record: InboundRecord) => {
      this.records.push(record);
    });
  }

  /** Resolves once at least `count` records arrived. @throws after `timeoutMs`. */
  async waitFor(count: number, timeoutMs = 30_000): Promise<InboundRecord[]> {
    const deadline = Date.now() + timeoutMs;
    while (this.records.length < count) {
      if (Date.now() > deadline) {
        throw new Error(`expected ${count} unparsed records, got ${this.records.length}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    return this.records;
  }

  async stop(): Promise<void> {
    await this.#consumer.stop();
  }
}

/** Debug lines to FERRY_TEST_LOG_FILE when test/run.ts set it, else silent. */
export function testLogger(): Logger {
  const file = process.env.FERRY_TEST_LOG_FILE;
  return createLogger(file ? { level: 'debug', destination: file } : { level: 'silent' });
}

export interface ReceiverHarness {
  /** Teardown of this harness; steps deferred now run before the harness's own. */
  readonly cleanup: CleanupStack;
  readonly kafka: KafkaClient;
  readonly producer: RecordProducer;
  readonly server: HttpServer;
  readonly receiver: CallbackReceiver;
  readonly metrics: FerryMetrics;
  readonly logger: Logger;
  readonly topic: string;
  /** The unparsed-callbacks topic (one partition). */
  readonly unparsedTopic: string;
  /** Collects the unparsed-callbacks topic, raw (started with `collect`). */
  readonly unparsed: RawCollector;
  /** The callback URL with the right token. */
  readonly callbackUrl: string;
  readonly collector: StatusCollector;
  /** Records in the topic now (end offset of its single partition; no transactions there). */
  recordCount(): Promise<number>;
  /** Records in the unparsed topic now. */
  unparsedCount(): Promise<number>;
  /** The `ferry_callbacks_total` value for these labels. */
  callbackCount(outcome: string, status?: string): Promise<number>;
}

export interface HarnessOptions {
  readonly brokers: readonly string[];
  readonly receiver?: Partial<
    Omit<
      CallbackReceiverOptions,
      'server' | 'producer' | 'statusTopic' | 'unparsedTopic' | 'token' | 'metrics' | 'logger'
    >
  >;
  /** Start the read_committed collector. Default true. */
  readonly collect?: boolean;
  /** Default: debug lines to FERRY_TEST_LOG_FILE when set (test/run.ts greps it), else silent. */
  readonly logger?: Logger;
  /** Where teardown steps go. Default: a new stack on `t`. */
  readonly cleanup?: CleanupStack;
}

/** Starts a receiver wired to a fresh topic; everything stops after the test. */
export async function startReceiverHarness(
  t: TestContext,
  options: HarnessOptions,
): Promise<ReceiverHarness> {
  const cleanup = options.cleanup ?? new CleanupStack(t);
  const logger = options.logger ?? testLogger();
  const metrics = createMetrics();
  const kafka = new KafkaClient({ brokers: options.brokers, clientId: 'callbacks-test', logger });
  cleanup.defer(() => kafka.close());
  const topic = uniqueTopic('ferry.status.test');
  const unparsedTopic = `${topic}.unparsed`;
  await kafka.ensureTopics([
    { topic, partitions: 1, replicationFactor: 1 },
    { topic: unparsedTopic, partitions: 1, replicationFactor: 1 },
  ]);

  const producer = kafka.createProducer();
  await producer.connect();
  cleanup.defer(() => producer.disconnect());

  // Every test client posts from 127.0.0.1, one connection per request (agent: false):
  // a slow broker would hold more than the default 64 of them open at once and have the
  // excess refused. The per-client bound has tests of its own.
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger,
    maxConnectionsPerClient: 1024,
  });
  const receiver = new CallbackReceiver({
    server,
    producer,
    statusTopic: topic,
    unparsedTopic,
    token: TEST_TOKEN,
    metrics,
    logger,
    ...options.receiver,
  });
  receiver.start();
  await server.start();
  cleanup.defer(async () => {
    await receiver.stop();
    await server.stop();
  });

  const collector = new StatusCollector(
    kafka.createRecordConsumer({ groupId: uniqueTopic('callbacks-test-reader'), topics: [topic] }),
  );
  const unparsed = new RawCollector(
    kafka.createRecordConsumer({
      groupId: uniqueTopic('callbacks-test-unparsed'),
      topics: [unparsedTopic],
    }),
  );
  if (options.collect ?? true) {
    await collector.start();
    cleanup.defer(() => collector.stop());
    await unparsed.start();
    cleanup.defer(() => unparsed.stop());
  }

  return {
    cleanup,
    kafka,
    producer,
    server,
    receiver,
    metrics,
    logger,
    topic,
    unparsedTopic,
    unparsed,
    callbackUrl: `${server.url}/callbacks/${encodeURIComponent(TEST_TOKEN)}`,
    collector,
    async recordCount() {
      const offsets = await kafka.endOffsets(topic);
      return Number(offsets.get(0) ?? '0');
    },
    async unparsedCount() {
      const offsets = await kafka.endOffsets(unparsedTopic);
      return Number(offsets.get(0) ?? '0');
    },
    async callbackCount(outcome, status) {
      const values = (await metrics.callbacks.get()).values;
      return values
        .filter(
          (v) =>
            v.labels.outcome === outcome && (status === undefined || v.labels.status === status),
        )
        .reduce((sum, v) => sum + v.value, 0);
    },
  };
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: string;
}

export interface RawRequest {
  readonly method?: string;
  readonly headers?: Record<string, string>;
  /** Body chunks, written in order with `chunkDelayMs` between them. */
  readonly chunks?: readonly (string | Buffer)[];
  readonly chunkDelayMs?: number;
  /** Bound on the whole exchange, ms. Default 15000. */
  readonly timeoutMs?: number;
}

/**
 * POSTs with node:http, so tests control headers, chunking and pacing. Resolves with the answer,
 * or rejects with the socket error when the server closed the connection before answering.
 */
export function rawPost(url: string, options: RawRequest = {}): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const req = request(url, {
      method: options.method ?? 'POST',
      headers: options.headers ?? {},
      agent: false,
      timeout: options.timeoutMs ?? 15_000,
    });
    req.on('timeout', () => req.destroy(new Error('test client timed out')));
    req.on('error', reject);
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', reject);
      res.on('end', () =>
        resolve({
          status: res.statusCode ?? 0,
          headers: res.headers,
          body: Buffer.concat(chunks).toString('utf8'),
        }),
      );
    });
    const chunks = options.chunks ?? [];
    void (async () => {
      for (const chunk of chunks) {
        if (req.destroyed) return;
        req.write(chunk);
        if (options.chunkDelayMs) await new Promise((r) => setTimeout(r, options.chunkDelayMs));
      }
      if (!req.destroyed) req.end();
    })();
  });
}

/** POSTs a JSON body with `Content-Type: application/json` and a Content-Length. */
export function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return rawPost(url, {
    headers: {
      'content-type': 'application/json',
      'content-length': String(Buffer.byteLength(text)),
      ...headers,
    },
    chunks: [text],
  });
}
