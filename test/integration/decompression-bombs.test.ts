/**
 * Decompression bombs from a producer ferry did not write: kcat (librdkafka) writes one
 * batch per codec holding two values that decompress to 100 times the command limit
 * (100 MiB of one byte, a few hundred KB on the wire) between valid commands. Each bomb
 * must get exactly one `too_large` result and a dead letter, the valid commands in the
 * same batch and after it go through, and ferry, run as the container image runs it,
 * never holds a bomb: its peak RSS (VmHWM) stays under the base deployment's memory
 * limit, and grows by less than one bomb over what it reached before the bombs.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { boundedDecodingCounts } from '../../src/kafka/bounded-fetch.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { command, produce, readRecords, startEmulator, startFerry } from '../helpers/ferry.ts';
import {
  BASE_MEMORY_LIMIT_MIB,
  BOMB_BYTES,
  BOMB_CODECS,
  BOMB_COMMAND_MAX_BYTES,
  KcatFiles,
  kcatFilesBatch,
  peakRssMiB,
  startBombFleet,
} from '../helpers/kcat-bombs.ts';

const BOMBS_PER_BATCH = 2;

test('a batch of values decompressing to 100x the command limit, in every codec from kcat: too_large each, the rest flows, peak RSS bounded', async (t) => {
  const emulator = await startEmulator(t);
  const { topics, replicas } = await startBombFleet(t, emulator, {
    partitions: 1,
    replicas: 1,
    commandMaxBytes: BOMB_COMMAND_MAX_BYTES,
  });
  const [ferry] = replicas;
  assert.ok(ferry);
  const pid = ferry.child.pid ?? 0;
  const peakBefore = peakRssMiB(pid);
  const topic = topics.commands;

  const files = new KcatFiles(t);
  const bombFile = files.bomb(BOMB_BYTES);
  let id = 41_000;
  const valid = new Map<number, string>();
  const batches: string[] = [];
  const smsFile = (codec: string) => {
    const n = ++id;
    valid.set(n, codec);
    return files.sms(n, { sms_message: `${codec} ${n}` });
  };
  for (const codec of BOMB_CODECS) {
    const batch = [smsFile(codec)];
    for (let i = 0; i < BOMBS_PER_BATCH; i++) batch.push(bombFile, smsFile(codec));
    const key = `batch-${codec}`;
    batches.push(key);
    await kcatFilesBatch(topic, 0, codec, key, batch);
  }
  // Then plain commands from kafkajs: the partition moved on past the bombs.
  const after = [++id, ++id, ++id];
  for (const n of after) valid.set(n, 'none');
  await produce(
    t,
    after.map((n) => command(topic, smsOperation(n))),
  );

  const bombs = BOMB_CODECS.length * BOMBS_PER_BATCH;
  const total = valid.size + bombs;
  const results = await readRecords(t, topics.results, total, {
    timeoutMs: 120_000,
    settleMs: 1000,
  });
  const peak = peakRssMiB(pid);
  t.diagnostic(
    `peak RSS ${peakBefore.toFixed(0)} MiB before, ${peak.toFixed(0)} MiB after ${bombs} bombs of ${BOMB_BYTES} bytes`,
  );
  assert.equal(results.length, total, 'one result per record, no more');
  for (const [n] of valid) {
    const mine = results.filter((r) => r.value.id === n);
    assert.equal(mine.length, 1, `one result for ${n}`);
    assert.equal(mine[0]?.value.success, true, `${n}: ${String(mine[0]?.value.error)}`);
  }
  for (const key of batches) {
    const refused = results.filter((r) => r.key === key && r.value.success === false);
    assert.equal(refused.length, BOMBS_PER_BATCH, `${key}: one result per bomb`);
    for (const result of refused) {
      assert.equal(result.value.code, 'too_large', JSON.stringify(result.value));
      assert.match(String(result.value.error), /value is 104857600 bytes once decompressed/);
    }
  }
  const dead = await readRecords(t, topics.dlq, bombs, { settleMs: 500 });
  assert.equal(dead.length, bombs, 'each bomb dead-lettered once');
  assert.equal(ferry.child.exitCode, null, `ferry still runs:\n${ferry.output().slice(-2000)}`);
  assert.ok(
    peak < BASE_MEMORY_LIMIT_MIB,
    `peak RSS ${peak.toFixed(0)} MiB under the ${BASE_MEMORY_LIMIT_MIB} MiB limit`,
  );
  assert.ok(
    peak - peakBefore < BOMB_BYTES / 1024 / 1024 / 2,
    `the bombs raised the peak RSS by ${(peak - peakBefore).toFixed(0)} MiB`,
  );
});

test('a batch decompressing to more than one fetch answer may keep is read in slices: each command once, in order', async (t) => {
  const emulator = await startEmulator(t);
  // The smallest in-flight cap: one answer keeps 256 KiB of decompressed records.
  const ferry = await startFerry(t, emulator, {
    FERRY_TOPIC_PARTITIONS: '1',
    FERRY_MAX_BYTES_IN_FLIGHT: String(256 * 1024),
  });
  const files = new KcatFiles(t);
  const ids = Array.from({ length: 40 }, (_, i) => 52_000 + i);
  // 60 KB each, 2.4 MB in all, a few KB on the wire.
  const batch = ids.map((n) => files.sms(n, { note: 'z'.repeat(60_000) }));
  const cutsBefore = boundedDecodingCounts.cuts;
  await kcatFilesBatch(ferry.topics.commands, 0, 'zstd', 'slices', batch);

  const results = await readRecords(t, ferry.topics.results, ids.length, { settleMs: 1000 });
  assert.deepEqual(
    results.map((r) => r.value.id),
    ids,
    'one result per command, in the order of the batch',
  );
  assert.ok(results.every((r) => r.value.success === true));
  // 2.4 MB in answers of 256 KiB: cut at least nine times, each read again from its cut.
  assert.ok(
    boundedDecodingCounts.cuts - cutsBefore >= 9,
    `${boundedDecodingCounts.cuts - cutsBefore} cuts`,
  );
});
