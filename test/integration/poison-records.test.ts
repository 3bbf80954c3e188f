/**
 * Poison records against the real broker and emulator: 100,000-deep nesting in every field of
 * an SMS, a 10 MB value, a 600 KB id, results larger than the results topic takes. Each record
 * must get exactly one result (and a dead letter when refused unread), the daemon must stay
 * ready throughout, and the valid commands after them must go through.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import type { OutboundRecord } from '../../src/kafka/kafka-client.ts';
import { smsOperation } from '../fixtures/operations.ts';
import {
  type ReadRecord,
  readRecords,
  startEmulator,
  startFerry,
  type TestFerry,
  testKafka,
  testTopics,
  untilReady,
} from '../helpers/ferry.ts';

const DEPTH = 100_000;
/** The results and dead-letter topics take records up to this size (their max.message.bytes). */
const OUTPUT_TOPIC_MAX_BYTES = 256 * 1024;
/** FERRY_RECORD_MAX_BYTES: the output topics' limit minus a margin. */
const RECORD_MAX_BYTES = 240_000;

const deep = `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`;

/** The JSON text of a valid SMS with `field` replaced (or added) by raw JSON text. */
function smsWith(id: number, field: string, json: string): string {
  const marker = `@@${field}@@`;
  return JSON.stringify({ ...smsOperation(id), [field]: marker }).replace(`"${marker}"`, json);
}

interface Planned {
  readonly key: string;
  readonly value: string;
  /** What the result must say; `ok` is a successful send. */
  readonly expect: 'ok' | 'too_deep' | 'too_large' | 'invalid_truncated';
}

function deepRecords(prefix: string, firstId: number): Planned[] {
  return ['id', 'type', 'phone', 'sms_message', 'extra'].map((field, index) => ({
    key: `${prefix}-deep-${field}`,
    value: smsWith(firstId + index, field, deep),
    expect: 'too_deep' as const,
  }));
}

function validRecords(prefix: string, firstId: number, count: number): Planned[] {
  return Array.from({ length: count }, (_, index) => ({
    key: String(firstId + index),
    value: JSON.stringify(smsOperation(firstId + index, { note: `${prefix} after poison` })),
    expect: 'ok' as const,
  }));
}

/** Polls readiness every 25 ms until stopped; returns every moment it was not ready. */
function watchReadiness(ferry: TestFerry): { stop: () => string[] } {
  const failures: string[] = [];
  const timer = setInterval(() => {
    const { ready, reasons } = ferry.daemon.ready();
    if (!ready) failures.push(reasons.join(', '));
  }, 25);
  return {
    stop: () => {
      clearInterval(timer);
      const { ready, reasons } = ferry.daemon.ready();
      if (!ready) failures.push(reasons.join(', '));
      return failures;
    },
  };
}

async function createTopics(t: TestContext, topics: ReturnType<typeof testTopics>) {
  const output = { 'max.message.bytes': String(OUTPUT_TOPIC_MAX_BYTES) };
  await testKafka(t).ensureTopics([
    // The broker must take the 10 MB command for ferry to see it at all.
    {
      topic: topics.commands,
      partitions: 2,
      replicationFactor: 1,
      config: { 'max.message.bytes': String(12 * 1024 * 1024) },
    },
    { topic: topics.results, partitions: 2, replicationFactor: 1, config: output },
    { topic: topics.dlq, partitions: 1, replicationFactor: 1, config: output },
    { topic: topics.status, partitions: 1, replicationFactor: 1 },
  ]);
}

function checkResults(planned: readonly Planned[], results: readonly ReadRecord[]): void {
  const byKey = new Map<string, ReadRecord[]>();
  for (const result of results) byKey.set(result.key, [...(byKey.get(result.key) ?? []), result]);
  for (const record of planned) {
    const found = byKey.get(record.key) ?? [];
    assert.equal(found.length, 1, `${record.key}: exactly one result, got ${found.length}`);
    const value = (found[0] as ReadRecord).value;
    assert.ok(((found[0] as ReadRecord).record.value?.length ?? 0) <= RECORD_MAX_BYTES);
    switch (record.expect) {
      case 'ok':
        assert.equal(value.success, true, `${record.key}: ${String(value.error)}`);
        break;
      case 'too_deep':
        assert.deepEqual([value.success, value.stage], [false, 'validation'], record.key);
        assert.match(String(value.error), /deeper than 32 levels \(FERRY_COMMAND_MAX_DEPTH\)$/);
        break;
      case 'too_large':
        assert.deepEqual([value.success, value.stage], [false, 'validation'], record.key);
        assert.match(String(value.error), /the limit is 1048576 \(FERRY_COMMAND_MAX_BYTES\)$/);
        break;
      case 'invalid_truncated':
        assert.deepEqual([value.success, value.stage], [false, 'validation'], record.key);
        assert.equal(value.truncated, true, record.key);
        break;
    }
  }
  assert.equal(results.length, planned.length, 'no result for a record never produced');
}

async function run(t: TestContext, env: Record<string, string>, planned: readonly Planned[]) {
  const emulator = await startEmulator(t);
  const topics = testTopics();
  await createTopics(t, topics);
  const ferry = await startFerry(
    t,
    emulator,
    { FERRY_RECORD_MAX_BYTES: String(RECORD_MAX_BYTES), ...env },
    topics,
  );
  await untilReady(ferry);
  const readiness = watchReadiness(ferry);
  // One record per request: a 10 MB value goes alone.
  const producer = testKafka(t).createProducer();
  await producer.connect();
  try {
    for (const record of planned) {
      const outbound: OutboundRecord = {
        topic: topics.commands,
        key: record.key,
        value: record.value,
      };
      await producer.send([outbound]);
    }
  } finally {
    await producer.disconnect();
  }
  const results = await readRecords(t, topics.results, planned.length, {
    timeoutMs: 120_000,
    settleMs: 1500,
  });
  const notReady = readiness.stop();
  assert.deepEqual(notReady, [], 'ferry stayed ready while it read the poison records');
  checkResults(planned, results);
  const refused = planned.filter((r) => r.expect === 'too_deep' || r.expect === 'too_large');
  const deadLetters = await readRecords(t, topics.dlq, refused.length, {
    timeoutMs: 60_000,
    settleMs: 1000,
  });
  assert.deepEqual(
    deadLetters.map((d) => d.key).sort(),
    refused.map((r) => r.key).sort(),
    'one dead letter per refused record, none for the others',
  );
  return { ferry, deadLetters };
}

test('100,000-deep nesting in any field, with hook injection on, gets one result each and stops nothing', {
  timeout: 180_000,
}, async (t) => {
  const planned = [
    ...validRecords('hook', 71_000, 2),
    ...deepRecords('hook', 71_100),
    ...validRecords('hook', 71_200, 5),
  ];
  const { ferry } = await run(
    t,
    {
      FERRY_CALLBACK_PUBLIC_URL: 'http://127.0.0.1:9/ferry',
      FERRY_CALLBACK_TOKEN: 'poison-test-token',
    },
    planned,
  );
  const failures = await ferry.metrics.registry.getSingleMetricAsString(
    'ferry_validation_failures_total',
  );
  assert.match(failures, /rule="too_deep"} 5/);
});

test('deep nesting, a 10 MB value, a 600 KB id and results past the topic limit, hook injection off', {
  timeout: 240_000,
}, async (t) => {
  const planned: Planned[] = [
    ...validRecords('plain', 72_000, 2),
    ...deepRecords('plain', 72_100),
    {
      key: 'plain-10mb-message',
      value: JSON.stringify(smsOperation(72_200, { sms_message: 'm'.repeat(10 * 1024 * 1024) })),
      expect: 'too_large',
    },
    {
      // A string id breaks the contract; its result echoes the id, 600 KB, past the topic limit.
      key: 'plain-600kb-id',
      value: JSON.stringify({ ...smsOperation(0), id: 'i'.repeat(600 * 1024) }),
      expect: 'invalid_truncated',
    },
    {
      key: 'plain-huge-type',
      value: JSON.stringify({ ...smsOperation(72_201), type: 't'.repeat(900 * 1024) }),
      expect: 'invalid_truncated',
    },
    ...validRecords('plain', 72_300, 5),
  ];
  const { deadLetters } = await run(t, {}, planned);
  const big = deadLetters.find((d) => d.key === 'plain-10mb-message');
  assert.equal(big?.record.headers['ferry-truncated'], 'true');
  assert.equal(
    big?.record.headers['ferry-original-bytes'],
    String(Buffer.byteLength(planned.find((p) => p.key === 'plain-10mb-message')?.value ?? '')),
  );
  assert.ok((big?.record.value?.length ?? Infinity) < RECORD_MAX_BYTES);
  const deepId = deadLetters.find((d) => d.key === 'plain-deep-id');
  assert.equal(
    deepId?.record.headers['ferry-truncated'],
    undefined,
    'a dead letter that fits is whole',
  );
  assert.equal(deepId?.record.value?.length, Buffer.byteLength(smsWith(72_100, 'id', deep)));
});
