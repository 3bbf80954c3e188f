/**
 * Runs the real daemon in-process against the test broker and a real emulator on
 * loopback, with teardown registered on the test context.
 */
import type { TestContext } from 'node:test';
import { readConfig } from '../../src/config/config.ts';
import { Daemon } from '../../src/daemon.ts';
import { createEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.ts';
import {
  type InboundRecord,
  KafkaClient,
  type OutboundRecord,
} from '../../src/kafka/kafka-client.ts';
import { createLogger, type Logger } from '../../src/observability/logger.ts';
import { createMetrics, type FerryMetrics } from '../../src/observability/metrics.ts';
import { FIXTURE_RCS_SENDER, FIXTURE_SENDER } from '../fixtures/operations.ts';
import { testBrokers, uniqueTopic } from './kafka.ts';

export const TEST_API_KEY = 'test-api-key-0123456789';

export interface TestFerry {
  readonly daemon: Daemon;
  readonly metrics: FerryMetrics;
  readonly topics: { commands: string; results: string; status: string; dlq: string };
  readonly env: Record<string, string>;
}

/** A logger for tests: silent unless FERRY_TEST_LOG_FILE names a file (the log-grep test reads it). */
export function testLogger(): Logger {
  const file = process.env.FERRY_TEST_LOG_FILE;
  return createLogger(
    file ? { level: 'debug', destination: file, secrets: [TEST_API_KEY] } : { level: 'silent' },
  );
}

export async function startEmulator(
  t: TestContext,
  options: Partial<EmulatorOptions> = {},
): Promise<Emulator> {
  const emulator = createEmulator({
    apiKey: TEST_API_KEY,
    senders: [FIXTURE_SENDER, FIXTURE_RCS_SENDER],
    seed: 7,
    ...options,
  });
  await emulator.start();
  t.after(() => emulator.stop());
  return emulator;
}

/** Unique topic names and a group for one test, so test files can share the broker. */
export function testTopics(): TestFerry['topics'] & { group: string } {
  const base = uniqueTopic('t');
  return {
    commands: `${base}.commands`,
    results: `${base}.results`,
    status: `${base}.status`,
    dlq: `${base}.dlq`,
    group: `${base}.group`,
  };
}

export interface LoopbackEnvOptions {
  readonly brokers: string;
  readonly group: string;
  readonly clientId: string;
  readonly topics: { commands: string; results: string; status: string; dlq: string };
  readonly gatewayUrl: string;
  readonly apiKey: string;
}

/**
 * The FERRY_* variables of a ferry on loopback for tests: its broker, group, topics
 * and gateway, HTTP (callbacks and operations) and gRPC on free ports, admin API on
 * loopback, no balance polling.
 */
export function loopbackEnv(options: LoopbackEnvOptions): Record<string, string> {
  const { topics } = options;
  return {
    FERRY_KAFKA_BROKERS: options.brokers,
    FERRY_KAFKA_GROUP: options.group,
    FERRY_KAFKA_CLIENT_ID: options.clientId,
    FERRY_TOPIC_COMMANDS: topics.commands,
    FERRY_TOPIC_RESULTS: topics.results,
    FERRY_TOPIC_STATUS: topics.status,
    FERRY_TOPIC_DLQ: topics.dlq,
    // Named after the status topic: unique per test like it, with no new field to pass.
    FERRY_TOPIC_UNPARSED_CALLBACKS: `${topics.status}.unparsed`,
    // Each test's fleet of its own: a pause in one test must not reach another's ferry.
    FERRY_TOPIC_CONTROL: `${options.group}.control`,
    // Ids of another test's commands must not count as this one's copies.
    FERRY_TOPIC_DEDUPE: `${topics.commands}.dedupe`,
    // Final status tracking's topics, per test like the others (tracking stays off unless asked).
    FERRY_TOPIC_TRACKING: `${topics.commands}.tracking`,
    FERRY_TOPIC_STATUS_FINAL: `${topics.status}.final`,
    // Off by default; on here, so every test and make chaos run with it.
    FERRY_DEDUPE: 'true',
    FERRY_API_KEY: options.apiKey,
    FERRY_SYNC_BASE_URL: options.gatewayUrl,
    FERRY_ASYNC_BASE_URL: options.gatewayUrl,
    FERRY_HTTP_HOST: '127.0.0.1',
    FERRY_HTTP_PORT: '0',
    FERRY_OPS_HOST: '127.0.0.1',
    FERRY_OPS_PORT: '0',
    FERRY_GRPC_HOST: '127.0.0.1',
    FERRY_GRPC_PORT: '0',
    FERRY_ADMIN_LOOPBACK_ONLY: 'true',
    FERRY_BALANCE_POLL_MS: '0',
  };
}

/**
 * loopbackEnv for a ferry process of a test: its topics and group, the emulator, the
 * test API key; the test run's brokers unless `brokers` names others.
 */
export function processEnv(
  topics: ReturnType<typeof testTopics>,
  emulator: Emulator,
  { brokers = testBrokers().join(','), clientId = topics.group } = {},
): Record<string, string> {
  return loopbackEnv({
    brokers,
    group: topics.group,
    clientId,
    topics,
    gatewayUrl: emulator.url,
    apiKey: TEST_API_KEY,
  });
}

/** Starts ferry against the emulator; `env` overrides any FERRY_* variable. */
export async function startFerry(
  t: TestContext,
  emulator: Emulator,
  env: Record<string, string> = {},
  topics = testTopics(),
  logger: Logger = testLogger(),
): Promise<TestFerry> {
  const fullEnv: Record<string, string> = {
    ...loopbackEnv({
      brokers: testBrokers().join(','),
      group: topics.group,
      clientId: topics.group,
      topics,
      gatewayUrl: emulator.url,
      apiKey: TEST_API_KEY,
    }),
    FERRY_TOPIC_PARTITIONS: '3',
    FERRY_BATCH_LINGER_MS: '20',
    FERRY_RETRY_BASE_MS: '20',
    FERRY_RETRY_MAX_MS: '100',
    FERRY_REQUEST_TIMEOUT_MS: '2000',
    FERRY_SHUTDOWN_GRACE_MS: '5000',
    FERRY_KAFKA_SESSION_TIMEOUT_MS: '6000',
    ...env,
  };
  const metrics = createMetrics();
  const daemon = new Daemon({
    config: readConfig(fullEnv),
    logger,
    metrics,
    onFatal: (error) => {
      throw error;
    },
  });
  t.after(() => daemon.stop());
  await daemon.start();
  return { daemon, metrics, topics, env: fullEnv };
}

/**
 * Waits until ferry reports ready: started, and the partitions of its first assignment
 * taken over. @throws with the last reasons after `timeoutMs`.
 */
export async function untilReady(ferry: TestFerry, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (ferry.daemon.ready().ready) return;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`not ready after ${timeoutMs} ms: ${ferry.daemon.ready().reasons.join(', ')}`);
}

/** A Kafka client for the test itself (producing commands, reading results). */
export function testKafka(t: TestContext): KafkaClient {
  const kafka = new KafkaClient({
    brokers: testBrokers(),
    clientId: 'ferry-test',
    logger: testLogger(),
  });
  t.after(() => kafka.close());
  return kafka;
}

export async function produce(t: TestContext, records: readonly OutboundRecord[]): Promise<void> {
  const producer = testKafka(t).createProducer();
  await producer.connect();
  try {
    await producer.send(records);
  } finally {
    await producer.disconnect();
  }
}

/** One command record keyed by String(id), as applications produce them. */
export function command(
  topic: string,
  operation: Record<string, unknown>,
  headers?: Record<string, string>,
): OutboundRecord {
  const key = operation.id === undefined ? `no-id-${Math.random()}` : String(operation.id);
  return headers
    ? { topic, key, value: JSON.stringify(operation), headers }
    : { topic, key, value: JSON.stringify(operation) };
}

export interface ReadRecord {
  readonly record: InboundRecord;
  readonly key: string;
  readonly value: Record<string, unknown>;
}

/**
 * Reads `count` committed records from a topic (read_committed), then waits
 * `settleMs` more to catch any extra one. Fails after `timeoutMs`.
 */
export async function readRecords(
  t: TestContext,
  topic: string,
  count: number,
  { timeoutMs = 30_000, settleMs = 300 } = {},
): Promise<ReadRecord[]> {
  const consumer = testKafka(t).createRecordConsumer({
    groupId: uniqueTopic('reader'),
    topics: [topic],
  });
  const records: ReadRecord[] = [];
  let done: () => void = () => undefined;
  const enough = new Promise<void>((resolve) => {
    done = resolve;
  });
  await consumer.start((record) => {
    const text = record.value?.toString('utf8') ?? 'null';
    let value: Record<string, unknown>;
    try {
      value = JSON.parse(text) as Record<string, unknown>;
    } catch {
      value = { raw: text };
    }
    records.push({ record, key: record.key?.toString('utf8') ?? '', value });
    if (records.length >= count) done();
  });
  try {
    const timer = new Promise<never>((_, reject) =>
      setTimeout(
        () => reject(new Error(`read ${records.length} of ${count} records from ${topic}`)),
        timeoutMs,
      ).unref(),
    );
    await Promise.race([enough, timer]);
    await new Promise((r) => setTimeout(r, settleMs));
  } finally {
    await consumer.stop();
  }
  return records;
}
