/**
 * Where results are written. By default (FERRY_RESULTS_PARTITIONING=source) each result
 * goes to its command's partition number, whatever partitioner the command's producer
 * used; with `key`, to its key's murmur2 partition. Commands come from kcat (librdkafka)
 * to partitions chosen by hand, results are read back with kcat.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { PartitionAssigner } from '../../src/kafka/acknowledged-send.ts';
import { findTool } from '../deploy/external-tools.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { readRecords, startEmulator, startFerry } from '../helpers/ferry.ts';
import { testBrokers } from '../helpers/kafka.ts';
import { kcatReadAll } from '../helpers/kcat.ts';

const execFileAsync = promisify(execFile);
const PARTITIONS = 3;
const PER_PARTITION = 4;

async function kcatProduce(topic: string, partition: number, lines: readonly string[]) {
  const child = execFileAsync(
    findTool('kcat'),
    ['-P', '-b', testBrokers().join(','), '-t', topic, '-p', String(partition), '-K', '\t'],
    { timeout: 30_000 },
  );
  child.child.stdin?.end(`${lines.join('\n')}\n`);
  await child;
}

/** Commands produced with kcat to partitions chosen by hand; their source partition by key. */
async function produceToChosenPartitions(commandsTopic: string, firstId: number) {
  const sourceOf = new Map<string, number>();
  for (let partition = 0; partition < PARTITIONS; partition += 1) {
    const lines = Array.from({ length: PER_PARTITION }, (_, index) => {
      const id = firstId + partition * PER_PARTITION + index;
      sourceOf.set(String(id), partition);
      return `${id}\t${JSON.stringify(smsOperation(id))}`;
    });
    await kcatProduce(commandsTopic, partition, lines);
  }
  return sourceOf;
}

/** The partition the Java client's default partitioner (murmur2) gives each key. */
async function murmur2Partitions(keys: readonly string[]): Promise<Map<string, number>> {
  const [hashed] = await new PartitionAssigner(async () => PARTITIONS).assign([
    { topic: 't', messages: keys.map((key) => ({ key, value: null })) },
  ]);
  return new Map((hashed?.messages ?? []).map((m) => [String(m.key), m.partition as number]));
}

test('by default each result is in its command partition number', async (t) => {
  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator, { FERRY_TOPIC_PARTITIONS: String(PARTITIONS) });
  const sourceOf = await produceToChosenPartitions(ferry.topics.commands, 81_000);
  await readRecords(t, ferry.topics.results, sourceOf.size, { settleMs: 500 });
  const results = await kcatReadAll(ferry.topics.results);
  assert.equal(results.length, sourceOf.size, 'one result per command');
  for (const result of results) {
    assert.equal(result.partition, sourceOf.get(result.key), `result of ${result.key}`);
  }
  // The test means something only if the key hash would have placed some elsewhere.
  const hashed = await murmur2Partitions([...sourceOf.keys()]);
  const moved = [...sourceOf].filter(([key, partition]) => hashed.get(key) !== partition);
  assert.ok(moved.length > 0, 'some keys hash to another partition than their command’s');
});

test('with FERRY_RESULTS_PARTITIONING=key each result is in its key’s murmur2 partition', async (t) => {
  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator, {
    FERRY_TOPIC_PARTITIONS: String(PARTITIONS),
    FERRY_RESULTS_PARTITIONING: 'key',
  });
  const sourceOf = await produceToChosenPartitions(ferry.topics.commands, 82_000);
  await readRecords(t, ferry.topics.results, sourceOf.size, { settleMs: 500 });
  const results = await kcatReadAll(ferry.topics.results);
  assert.equal(results.length, sourceOf.size, 'one result per command');
  const hashed = await murmur2Partitions([...sourceOf.keys()]);
  for (const result of results) {
    assert.equal(result.partition, hashed.get(result.key), `result of ${result.key}`);
  }
  const moved = results.filter((r) => r.partition !== sourceOf.get(r.key));
  assert.ok(moved.length > 0, 'some results are not in their command’s partition');
});
