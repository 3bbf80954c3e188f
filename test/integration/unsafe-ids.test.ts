/**
 * Ids past 2^53 - 1, written by kcat (librdkafka, a producer ferry did not write) to the real
 * broker: `9007199254740993` and `9007199254740992` are one number once JSON.parse read them.
 * Each is refused (`code: validation`, `field: id`), never sent, and its result, read back
 * byte for byte with kcat, names the id its own command had, every digit of it.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ID_RANGE_ERROR } from '../../src/pipeline/command-id.ts';
import { FIXTURE_PHONE, FIXTURE_SENDER } from '../fixtures/operations.ts';
import { readRecords, startEmulator, startFerry } from '../helpers/ferry.ts';
import { kcatWrite } from '../helpers/fleet.ts';
import { testBrokers } from '../helpers/kafka.ts';
import { kcatReadAll } from '../helpers/kcat.ts';

const sms = (id: string) =>
  `{"type":"sms","id":${id},"phone":${FIXTURE_PHONE},"sms_message":"Hello from ferry","sms_signature":"${FIXTURE_SENDER}"}`;

/** A result's fields, its `id` as the source text that was written (not as a double). */
function readExactly(value: Buffer): Record<string, unknown> {
  return JSON.parse(value.toString('utf8'), (key, parsed, context?: { source?: string }) =>
    key === 'id' && typeof parsed === 'number' ? context?.source : parsed,
  ) as Record<string, unknown>;
}

test('commands whose ids a double cannot hold are refused, and each result names its own id exactly', {
  timeout: 90_000,
}, async (t) => {
  const emulator = await startEmulator(t);
  const { topics } = await startFerry(t, emulator);
  const brokers = testBrokers().join(',');
  const ids = ['9007199254740993', '9007199254740992', '-9007199254740993', '9007199254740991'];
  for (const id of ids) await kcatWrite(brokers, topics.commands, id, sms(id));

  await readRecords(t, topics.results, ids.length);
  const results = await kcatReadAll(topics.results);
  assert.equal(results.length, ids.length);
  for (const id of ids) {
    const record = results.find((candidate) => candidate.key === id);
    assert.ok(record, `a result keyed ${id}`);
    const text = record.value.toString('utf8');
    const result = readExactly(record.value);
    assert.equal(result.id, id, text);
    assert.ok(text.includes(`"id":${id},`), text);
    if (id === '9007199254740991') {
      assert.equal(result.success, true, text);
      continue;
    }
    assert.equal(result.success, false, text);
    assert.equal(result.stage, 'validation');
    assert.equal(result.code, 'validation');
    assert.equal(result.field, 'id');
    assert.equal(result.error, ID_RANGE_ERROR);
    assert.equal(result.attempts, 0);
  }
  // Only the id within the bound reached the gateway.
  assert.equal(emulator.stats().envelopes.sync, 1);
});
