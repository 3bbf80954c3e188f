/**
 * FERRY_RESULTS_PARTITIONING=source: each result is written to its command's partition
 * number, whatever partitioner the command's producer used. Commands come from kcat
 * (librdkafka) to partitions chosen by hand, results are read back with kcat.
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

test('with FERRY_RESULTS_PARTITIONING=source each result is in its command partition number', async (t) => {
  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator, {
    FERRY_TOPIC_PARTITIONS: String(PARTITIONS),
    FERRY_RESULTS_PARTITIONING: 'source',
  });
  const sourceOf = new Map<string, number>();
  for (let partition = 0; partition < PARTITIONS; partition += 1) {
    const lines = Array.from({ length: PER_PARTITION }, (_, index) => {
      const id = 81_000 + partition * PER_PARTITION + index;
      sourceOf.set(String(id), partition);
      return `${id}\t${JSON.stringify(smsOperation(id))}`;
    });
    await kcatProduce(ferry.topics.commands, partition, lines);
  }
  await readRecords(t, ferry.topics.results, sourceOf.size, { settleMs: 500 });
  const results = await kcatReadAll(ferry.topics.results);
  assert.equal(results.length, sourceOf.size, 'one result per command');
  for (const result of results) {
    assert.equal(result.partition, sourceOf.get(result.key), `result of ${result.key}`);
  }
  // The test means something only if the key hash would have placed some elsewhere.
  const [hashed] = await new PartitionAssigner(async () => PARTITIONS).assign([
    { topic: 't', messages: [...sourceOf.keys()].map((key) => ({ key, value: null })) },
  ]);
  const moved = (hashed?.messages ?? []).filter((m) => m.partition !== sourceOf.get(String(m.key)));
  assert.ok(moved.length > 0, 'some keys hash to another partition than their command’s');
});
