/**
 * Compressed record batches from and to a foreign Kafka client: kcat (librdkafka)
 * produces commands in every codec and reads what ferry writes in every codec.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { findTool } from '../deploy/external-tools.ts';
import { smsOperation } from '../fixtures/operations.ts';
import {
  command,
  produce,
  readRecords,
  startEmulator,
  startFerry,
  testKafka,
} from '../helpers/ferry.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

const execFileAsync = promisify(execFile);
const CODECS = ['gzip', 'snappy', 'lz4', 'zstd'] as const;
const PER_BATCH = 6;

/** Produces `lines` (`key\tvalue`) to partition 0 of `topic` with kcat, as one batch in `codec`. */
async function kcatProduce(topic: string, codec: string, lines: readonly string[]): Promise<void> {
  const kcat = findTool('kcat');
  const child = execFileAsync(
    kcat,
    [
      ...['-P', '-b', testBrokers().join(','), '-t', topic, '-p', '0'],
      ...['-z', codec, '-K', '\t', '-X', 'linger.ms=100'],
    ],
    { timeout: 30_000 },
  );
  child.child.stdin?.end(`${lines.join('\n')}\n`);
  await child;
}

/** Reads a whole topic with kcat at read_committed: `key\tvalue` per record. */
async function kcatRead(topic: string): Promise<string[]> {
  const { stdout } = await execFileAsync(
    findTool('kcat'),
    [
      ...['-C', '-b', testBrokers().join(','), '-t', topic, '-o', 'beginning', '-e', '-q'],
      ...['-X', 'isolation.level=read_committed', '-f', '%k\\t%s\\n'],
    ],
    { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout.split('\n').filter((line) => line.length > 0);
}

/** Runs the bare kafkajs reader in a child process: what it read, or why it crashed. */
async function kafkajsReader(
  topic: string,
  count: number,
  ferryCodecs: boolean,
): Promise<{ values?: string[]; crash?: string }> {
  const { stdout } = await execFileAsync(
    process.execPath,
    [
      '--disable-warning=TimeoutNegativeWarning',
      'test/kafka/kafkajs-reader.ts',
      testBrokers().join(','),
      topic,
      String(count),
      ...(ferryCodecs ? ['--ferry-codecs'] : []),
    ],
    { timeout: 45_000 },
  );
  return JSON.parse(stdout.trim().split('\n').at(-1) ?? '{}') as {
    values?: string[];
    crash?: string;
  };
}

test('kafkajs alone cannot read a snappy batch from kcat; with ferry codecs it reads every record', async (t) => {
  const topic = uniqueTopic('snappy-kcat');
  await testKafka(t).ensureTopics([{ topic, partitions: 1, replicationFactor: 1 }]);
  const values = [1, 2, 3].map((id) => JSON.stringify({ id }));
  await kcatProduce(
    topic,
    'snappy',
    values.map((value, i) => `k${i}\t${value}`),
  );
  const bare = await kafkajsReader(topic, values.length, false);
  assert.equal(bare.crash, 'Snappy compression not implemented');
  const registered = await kafkajsReader(topic, values.length, true);
  assert.deepEqual(registered.values, values);
});

test('command batches from kcat in gzip, snappy, lz4 and zstd each get exactly one successful result', async (t) => {
  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator);
  const topic = ferry.topics.commands;
  let id = 7000;
  const ids: number[] = [];
  for (const codec of CODECS) {
    const lines: string[] = [];
    for (let i = 0; i < PER_BATCH; i++) {
      ids.push(++id);
      lines.push(`${id}\t${JSON.stringify(smsOperation(id, { sms_message: `${codec} ${id}` }))}`);
    }
    await kcatProduce(topic, codec, lines);
  }
  // Then plain commands: ferry went past the compressed batches and goes on.
  const plain = [++id, ++id, ++id];
  ids.push(...plain);
  await produce(
    t,
    plain.map((n) => command(topic, smsOperation(n))),
  );

  const results = await readRecords(t, ferry.topics.results, ids.length, { settleMs: 1000 });
  assert.equal(results.length, ids.length, 'one result per command, no more');
  for (const n of ids) {
    const mine = results.filter((r) => r.key === String(n));
    assert.equal(mine.length, 1, `one result for command ${n}`);
    assert.equal(mine[0]?.value.success, true, `${n}: ${String(mine[0]?.value.error)}`);
  }
  assert.deepEqual(ferry.daemon.ready(), { ready: true, reasons: [] }, 'ferry stayed ready');
  assert.equal(emulator.stats().envelopes.sync > 0, true);
});

for (const codec of CODECS) {
  test(`with FERRY_KAFKA_COMPRESSION=${codec}, kcat reads ferry's results`, async (t) => {
    const emulator = await startEmulator(t);
    const ferry = await startFerry(t, emulator, {
      FERRY_KAFKA_COMPRESSION: codec,
      FERRY_TOPIC_PARTITIONS: '1',
    });
    const ids = [1, 2, 3, 4, 5].map((n) => 8000 + n);
    await produce(
      t,
      ids.map((n) => command(ferry.topics.commands, smsOperation(n))),
    );
    await readRecords(t, ferry.topics.results, ids.length);

    const lines = await kcatRead(ferry.topics.results);
    assert.equal(lines.length, ids.length, lines.join('\n'));
    for (const n of ids) {
      const line = lines.find((l) => l.startsWith(`${n}\t`));
      assert.ok(line, `kcat read the result of ${n}`);
      const value = JSON.parse(line.slice(line.indexOf('\t') + 1)) as Record<string, unknown>;
      assert.deepEqual([value.id, value.success], [n, true]);
    }
    if (codec !== 'gzip') {
      // The proof that the results really are in this codec: bare kafkajs cannot read them.
      const bare = await kafkajsReader(ferry.topics.results, ids.length, false);
      assert.match(String(bare.crash), /compression not implemented/i);
    }
  });
}
