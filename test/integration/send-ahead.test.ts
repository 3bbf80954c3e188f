/**
 * A partition's next batch goes out while the batch before it is still at the gateway,
 * and commits stay in fetch order however the answers come back: with a slow gateway
 * that answers some envelopes later than the ones sent after them, the results of a
 * single partition appear in the order of its commands, once each, and no batch waited
 * for the answers of the one before it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { smsOperation } from '../fixtures/operations.ts';
import { command, readRecords, startEmulator, startFerry, testKafka } from '../helpers/ferry.ts';

const LATENCY_MS = 300;
const BURSTS = 8;
const PER_BURST = 5;

test('batches of one partition are sent ahead of the earlier ones’ answers and commit in order', async (t) => {
  // One envelope in five is answered 600 ms late: later envelopes overtake it.
  const emulator = await startEmulator(t, {
    knobs: { latencyMs: LATENCY_MS, slowAnswerRate: 0.2, slowAnswerMs: 2 * LATENCY_MS },
  });
  const ferry = await startFerry(t, emulator, {
    FERRY_TOPIC_PARTITIONS: '1',
    FERRY_BATCH_LINGER_MS: '0',
  });
  const producer = testKafka(t).createProducer();
  await producer.connect();
  t.after(() => producer.disconnect());
  // The partition's takeover and first send intent come first: batches fetched while
  // those run wait for them, which is not what is measured here.
  await producer.send([command(ferry.topics.commands, smsOperation(69_999))]);
  await readRecords(t, ferry.topics.results, 1, { settleMs: 0 });
  const before = await waitsWithin100Ms(ferry);
  const ids: number[] = [];
  for (let burst = 0; burst < BURSTS; burst += 1) {
    const records = Array.from({ length: PER_BURST }, (_, index) => {
      const id = 70_000 + burst * PER_BURST + index;
      ids.push(id);
      return command(ferry.topics.commands, smsOperation(id));
    });
    await producer.send(records);
    await sleep(LATENCY_MS / 8);
  }
  const results = (
    await readRecords(t, ferry.topics.results, ids.length + 1, { settleMs: 1000 })
  ).slice(1);
  assert.deepEqual(
    results.map((result) => result.value.id),
    ids,
    'one result per command, in the order of the commands',
  );
  assert.ok(results.every((result) => result.value.success === true));
  const after = await waitsWithin100Ms(ferry);
  const count = after.count - before.count;
  assert.ok(count > 1, `batches handled: ${count}`);
  assert.equal(
    after.within - before.within,
    count,
    `every batch began within 100 ms of its fetch, though the gateway takes ${LATENCY_MS} ms`,
  );
});

/** Batches that began, and those of them that began within 100 ms of their fetch. */
async function waitsWithin100Ms(
  ferry: Awaited<ReturnType<typeof startFerry>>,
): Promise<{ count: number; within: number }> {
  const wait = (await ferry.metrics.stageDuration.get()).values.filter(
    (value) => value.labels.stage === 'wait',
  );
  const count = wait.find((value) => value.metricName?.endsWith('_count'))?.value ?? 0;
  const within =
    wait.find(
      (value) =>
        value.metricName?.endsWith('_bucket') &&
        (value.labels as Record<string, unknown>).le === 0.1,
    )?.value ?? 0;
  return { count, within };
}
