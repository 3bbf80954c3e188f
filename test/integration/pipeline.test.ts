import assert from 'node:assert/strict';
import { test } from 'node:test';
import { operationTypes } from '../../src/contract/index.ts';
import { FIXTURE_PHONE, smsOperation, validOperations } from '../fixtures/operations.ts';
import { command, produce, readRecords, startEmulator, startFerry } from '../helpers/ferry.ts';

test('every operation type goes through ferry and gets exactly one result', async (t) => {
  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator);
  const operations = operationTypes.map((type, index) => {
    const operation: Record<string, unknown> = { ...validOperations[type] };
    if (typeof operation.id === 'number') operation.id = 5000 + index;
    return operation;
  });
  // `status` asks about a message the gateway accepted, so it goes once the sms has its result.
  const smsId = operations.find((op) => op.type === 'sms')?.id;
  const status = operations.find((op) => op.type === 'status') ?? {};
  status.id = smsId;
  const first = operations.filter((op) => op !== status);
  await produce(
    t,
    first.map((op) => command(ferry.topics.commands, op)),
  );
  await readRecords(t, ferry.topics.results, first.length);
  await produce(t, [command(ferry.topics.commands, { ...status, id: smsId })]);
  const results = await readRecords(t, ferry.topics.results, operations.length, { settleMs: 1000 });
  assert.equal(results.length, operations.length, 'one result per command, no more');
  for (const operation of operations) {
    const result = results.find(
      (r) =>
        r.value.type === operation.type &&
        (operation.id === undefined || r.value.id === operation.id),
    );
    assert.ok(result, `a result for ${String(operation.type)}`);
    assert.equal(
      result.value.success,
      true,
      `${String(operation.type)}: ${String(result.value.error)}`,
    );
    assert.equal(result.value.stage, 'upstream');
    assert.equal(result.value.transport, 'sync');
    assert.equal(typeof result.value.completed_at, 'string');
  }
  const sms = results.find((r) => r.value.type === 'sms');
  assert.ok(sms?.value.msg_id !== undefined, 'sync sends carry msg_id');
  assert.equal(typeof sms?.value.parts, 'number');
  const balance = results.find((r) => r.value.type === 'balance');
  assert.equal(typeof (balance?.value.data as { amount?: unknown } | undefined)?.amount, 'number');
  assert.ok(emulator.stats().envelopes.sync < operations.length, 'operations were batched');
});

test('one envelope mixing valid, invalid and Alpha-name commands gets every result right and in order', async (t) => {
  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator, {
    FERRY_TOPIC_PARTITIONS: '1',
    FERRY_BATCH_LINGER_MS: '200',
  });
  const sms = smsOperation;
  const topic = ferry.topics.commands;
  await produce(t, [
    command(topic, sms(1)),
    command(topic, sms(2, { sms_lifetime: 10 })),
    command(topic, sms(3, { sms_signature: 'Unknown Sender' })),
    { topic, key: 'garbage', value: '{not json' },
    command(topic, sms(5)),
    command(topic, { type: 'whatsapp', id: 6, phone: FIXTURE_PHONE }),
    // The gateway answers a created template under its own id, not 7.
    command(topic, { type: 'template/create', id: 7, template: 'Code {code}', name: 'otp' }),
    command(topic, { type: 'pipeline', id: 8, phone: FIXTURE_PHONE, pipeline: [] }),
  ]);
  const results = await readRecords(t, ferry.topics.results, 8);
  assert.deepEqual(
    results.map((r) => r.key),
    ['1', '2', '3', 'garbage', '5', '6', '7', '8'],
    'results in the order of the commands',
  );
  const [r1, r2, r3, r4, r5, r6, r7, r8] = results.map((r) => r.value);
  assert.deepEqual([r1?.success, r1?.code], [true, undefined]);
  assert.deepEqual(
    [r2?.success, r2?.stage, r2?.code, r2?.field],
    [false, 'validation', 'validation', 'sms_lifetime'],
  );
  assert.match(String(r2?.error), /^sms_lifetime: /);
  assert.deepEqual(
    [r3?.success, r3?.stage, r3?.error, r3?.code],
    [false, 'upstream', 'Error in Alpha-name', 'gateway_sender_rejected'],
  );
  assert.deepEqual(
    [r4?.success, r4?.stage, r4?.id, r4?.code],
    [false, 'validation', undefined, 'validation'],
  );
  assert.equal(r5?.success, true);
  assert.deepEqual(
    [r6?.success, r6?.stage, r6?.error, r6?.code, r6?.field],
    [false, 'validation', 'Invalid message type', 'validation', 'type'],
  );
  assert.deepEqual([r7?.success, r7?.attempts], [true, 1], String(r7?.error));
  assert.deepEqual(
    [r8?.success, r8?.code, r8?.field, r8?.error],
    [false, 'validation', 'pipeline', 'pipeline: must have at least 1 item'],
  );
  assert.equal(
    emulator.stats().envelopes.sync,
    1,
    'the four sendable commands shared one envelope, answered once',
  );
  const deadLetters = await readRecords(t, ferry.topics.dlq, 1);
  assert.equal(deadLetters[0]?.key, 'garbage');
  assert.equal(deadLetters[0]?.record.headers['ferry-source-topic'], topic);
  assert.equal(deadLetters[0]?.record.headers['ferry-error-code'], 'validation');
});
