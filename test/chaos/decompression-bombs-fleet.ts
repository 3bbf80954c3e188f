/**
 * Decompression bombs against a fleet (part of `make chaos`): two replicas of the image
 * build share two partitions; kcat writes, into each partition, one batch per codec of
 * two values that decompress to 100 times the command limit between valid commands.
 * Neither replica may exit (a pod killed for memory restarts and reads the same batch
 * again: a crash loop from one record), each bomb gets one `too_large` result, every
 * valid command one successful result, and each replica's peak RSS stays under the base
 * deployment's memory limit.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { smsOperation } from '../fixtures/operations.ts';
import { command, produce, readRecords, startEmulator } from '../helpers/ferry.ts';
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

const PARTITIONS = 2;
const REPLICAS = 2;

test('two replicas read bombs in every codec on both partitions: no restart, one answer each, peak RSS bounded', async (t) => {
  const emulator = await startEmulator(t);
  const { topics, replicas } = await startBombFleet(t, emulator, {
    partitions: PARTITIONS,
    replicas: REPLICAS,
    commandMaxBytes: BOMB_COMMAND_MAX_BYTES,
  });

  const files = new KcatFiles(t);
  const bomb = files.bomb(BOMB_BYTES);
  let id = 61_000;
  const valid: number[] = [];
  const sms = () => {
    valid.push(++id);
    return files.sms(id);
  };
  let bombs = 0;
  for (let partition = 0; partition < PARTITIONS; partition++) {
    for (const codec of BOMB_CODECS) {
      await kcatFilesBatch(topics.commands, partition, codec, `p${partition}-${codec}`, [
        sms(),
        bomb,
        sms(),
        bomb,
        sms(),
      ]);
      bombs += 2;
    }
  }
  const after = Array.from({ length: 10 }, () => ++id);
  valid.push(...after);
  await produce(
    t,
    after.map((n) => command(topics.commands, smsOperation(n))),
  );

  const results = await readRecords(t, topics.results, valid.length + bombs, {
    timeoutMs: 180_000,
    settleMs: 2000,
  });
  const peaks = replicas.map((replica) => peakRssMiB(replica.child.pid ?? 0));
  t.diagnostic(`peak RSS of the replicas: ${peaks.map((p) => p.toFixed(0)).join(', ')} MiB`);
  for (const [i, replica] of replicas.entries()) {
    assert.equal(
      replica.child.exitCode,
      null,
      `replica ${i} runs:\n${replica.output().slice(-2000)}`,
    );
    assert.ok(
      (peaks[i] ?? 0) < BASE_MEMORY_LIMIT_MIB,
      `replica ${i}: peak ${peaks[i]?.toFixed(0)} MiB`,
    );
  }
  assert.equal(results.length, valid.length + bombs, 'one result per record, no more');
  for (const n of valid) {
    const mine = results.filter((r) => r.value.id === n);
    assert.deepEqual(
      mine.map((r) => r.value.success),
      [true],
      `one successful result for ${n}`,
    );
  }
  const refused = results.filter((r) => r.value.code === 'too_large');
  assert.equal(refused.length, bombs, 'each bomb answered too_large once');
});
