import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { smsOperation } from '../fixtures/operations.ts';
import { command, produce, readRecords, startEmulator, startFerry } from '../helpers/ferry.ts';

const sms = (id: number) => smsOperation(id);

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not reached in time');
    await sleep(20);
  }
}

const lostAnswers = [
  { name: 'an answer lost after the gateway processed the envelope', knobs: { lostAnswerRate: 1 } },
  {
    name: 'an answer slower than the request timeout',
    knobs: { slowAnswerRate: 1, slowAnswerMs: 1_500 },
  },
] as const;

for (const { name, knobs } of lostAnswers) {
  test(`${name}: the commands are looked up, not sent again`, async (t) => {
    const emulator = await startEmulator(t, { knobs });
    const ferry = await startFerry(t, emulator, {
      FERRY_REQUEST_TIMEOUT_MS: '400',
      FERRY_TOPIC_PARTITIONS: '1',
    });
    const ids = [701, 702, 703];
    await produce(
      t,
      ids.map((id) => command(ferry.topics.commands, sms(id))),
    );
    await until(() => emulator.stats().operations >= ids.length);
    emulator.setKnobs({ lostAnswerRate: 0, slowAnswerRate: 0 });
    const results = await readRecords(t, ferry.topics.results, ids.length);
    for (const result of results) {
      assert.equal(result.value.success, true);
      assert.equal(result.value.reconciled, true);
      assert.equal(typeof result.value.msg_id, 'string');
      assert.ok(Number(result.value.attempts) >= 2);
    }
    const stats = emulator.stats();
    assert.deepEqual(stats.duplicates, []);
    for (const id of ids) assert.equal(stats.sendsById[String(id)], 1, `id ${id} accepted once`);
    const found = await ferry.metrics.registry.getSingleMetricAsString(
      'ferry_reconciliations_total',
    );
    assert.match(found, /ferry_reconciliations_total\{outcome="found"\} 3/);
  });
}

test('a send refused before it reached the gateway is looked up, not found, and sent', async (t) => {
  const emulator = await startEmulator(t, { knobs: { http500Rate: 1 } });
  const ferry = await startFerry(t, emulator, {
    FERRY_TOPIC_PARTITIONS: '1',
    FERRY_MAX_ATTEMPTS: '10',
  });
  await produce(t, [command(ferry.topics.commands, sms(801))]);
  await until(() => emulator.stats().requests >= 1);
  emulator.setKnobs({ http500Rate: 0 });
  const [result] = await readRecords(t, ferry.topics.results, 1);
  assert.equal(result?.value.success, true);
  assert.equal(result?.value.reconciled, undefined, 'it was really sent');
  assert.equal(emulator.stats().sendsById['801'], 1);
});
