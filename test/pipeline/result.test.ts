import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { InboundRecord } from '../../src/kafka/kafka-client.ts';
import type { ValidCommand } from '../../src/pipeline/command.ts';
import { backoffMs } from '../../src/pipeline/dispatcher.ts';
import { sendResult } from '../../src/pipeline/result.ts';

const record = {} as InboundRecord;
const sms: ValidCommand = {
  kind: 'valid',
  record,
  transport: 'sync',
  type: 'sms',
  id: 9,
  json: '{}',
};
const hlr: ValidCommand = { ...sms, type: 'hlr' };

test('a sync send result carries msg_id and parts, not data', () => {
  const result = sendResult(sms, {
    kind: 'item',
    item: { success: true, data: { id: 9, msg_id: 'm1', parts: 2, data: 1 } },
    attempts: 1,
  });
  assert.deepEqual(
    { ...result, completed_at: undefined },
    {
      id: 9,
      type: 'sms',
      success: true,
      stage: 'upstream',
      transport: 'sync',
      msg_id: 'm1',
      parts: 2,
      attempts: 1,
      completed_at: undefined,
    },
  );
});

test('a lookup result carries the item data', () => {
  const result = sendResult(hlr, {
    kind: 'item',
    item: { success: true, data: { status: 'DELIVERED' } },
    attempts: 1,
  });
  assert.deepEqual(result.data, { status: 'DELIVERED' });
  assert.equal(result.msg_id, undefined);
});

test('failures say where they ended', () => {
  assert.equal(
    sendResult(sms, { kind: 'transport', error: 'timeout', attempts: 5, delivery: 'in_doubt' })
      .stage,
    'transport',
  );
  assert.equal(
    sendResult(sms, { kind: 'transport', error: 'refused', attempts: 5, delivery: 'unsent' })
      .delivery,
    'unsent',
  );
  const item = sendResult(sms, {
    kind: 'item',
    item: { success: false, error: 'Error in Alpha-name' },
    attempts: 1,
  });
  assert.deepEqual(
    [item.success, item.stage, item.error],
    [false, 'upstream', 'Error in Alpha-name'],
  );
  const async = sendResult(
    { ...sms, transport: 'async' },
    { kind: 'accepted', requestId: 'r1', attempts: 1 },
  );
  assert.deepEqual([async.success, async.request_id], [true, 'r1']);
  const found = sendResult(sms, { kind: 'reconciled', record: { msg_id: 'm7' }, attempts: 2 });
  assert.deepEqual([found.success, found.msg_id, found.reconciled], [true, 'm7', true]);
});

test('failures carry a stable code next to the error text', () => {
  const code = (outcome: Parameters<typeof sendResult>[1]) => {
    const result = sendResult(sms, outcome);
    return [result.success, result.code, result.error];
  };
  assert.deepEqual(
    code({ kind: 'transport', error: 'timeout', attempts: 5, delivery: 'in_doubt' }),
    [false, 'in_doubt', 'timeout'],
  );
  assert.deepEqual(code({ kind: 'transport', error: 'refused', attempts: 5, delivery: 'unsent' }), [
    false,
    'transport',
    'refused',
  ]);
  assert.deepEqual(
    code({ kind: 'item', item: { success: false, error: 'Error in Alpha-name' }, attempts: 1 }),
    [false, 'gateway_sender_rejected', 'Error in Alpha-name'],
    "a known text gets its own code, the gateway's text unchanged",
  );
  assert.deepEqual(
    code({ kind: 'item', item: { success: false, error: 'Number blocked' }, attempts: 1 }),
    [false, 'gateway_item_error', 'Number blocked'],
    'any other text keeps the generic code',
  );
  assert.deepEqual(code({ kind: 'rejected', error: 'Server busy', attempts: 1 }), [
    false,
    'gateway_rejected',
    'Server busy',
  ]);
  assert.deepEqual(
    code({ kind: 'item', item: { success: true, data: { msg_id: 'm' } }, attempts: 1 }),
    [true, undefined, undefined],
    'no code on success',
  );
  assert.deepEqual(code({ kind: 'accepted', requestId: 'r', attempts: 1 }), [
    true,
    undefined,
    undefined,
  ]);
});

test('backoff grows exponentially with jitter and stays under the cap', () => {
  for (let attempt = 1; attempt <= 10; attempt += 1) {
    const step = Math.min(1000, 100 * 2 ** (attempt - 1));
    const delay = backoffMs(attempt, 100, 1000);
    assert.ok(delay >= step / 2 && delay <= step, `attempt ${attempt}: ${delay}`);
  }
});
