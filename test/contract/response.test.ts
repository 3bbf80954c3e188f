import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  ACCESS_DENIED,
  ALPHA_NAME_ERROR,
  INVALID_MESSAGE_TYPE,
  MISSING_ERROR_TEXT,
  readAsyncResponse,
  readSendResult,
  readSyncResponse,
} from '../../src/contract/index.ts';
import { FerryError } from '../../src/errors.ts';

/** Asserts that `run` throws a retryable FerryError of code `transport` whose message matches. */
function assertTransportError(run: () => unknown, message: RegExp): void {
  assert.throws(run, (error: unknown) => {
    assert.ok(error instanceof FerryError, 'a FerryError');
    assert.equal(error.code, 'transport');
    assert.equal(error.retryable, true);
    assert.match(error.message, message);
    return true;
  });
}

const json = (value: unknown): string => JSON.stringify(value);

describe('readSyncResponse', () => {
  test('maps items back to operations by position', () => {
    const body = json({
      success: true,
      data: [
        { success: true, data: { id: 1, msg_id: 'g-1', parts: 1, data: 0 } },
        { success: true, data: { amount: 10.5, currency: 'EUR' } },
        { success: true, data: { id: '3', msg_id: 903, parts: 2 } },
      ],
    });
    const response = readSyncResponse(body, [1, undefined, 3]);
    assert.deepEqual(response, {
      kind: 'items',
      items: [
        { success: true, data: { id: 1, msg_id: 'g-1', parts: 1, data: 0 } },
        { success: true, data: { amount: 10.5, currency: 'EUR' } },
        { success: true, data: { id: '3', msg_id: 903, parts: 2 } },
      ],
    });
  });

  test('a failed item keeps its error and data, the others succeed', () => {
    const body = json({
      success: true,
      data: [
        { success: true, data: { id: 1, msg_id: 'g-1', parts: 1 } },
        { success: false, error: ALPHA_NAME_ERROR, data: { id: 2 } },
        { success: false, error: INVALID_MESSAGE_TYPE },
      ],
    });
    const response = readSyncResponse(body, [1, 2, 3]);
    assert.equal(response.kind, 'items');
    if (response.kind !== 'items') return;
    assert.deepEqual(response.items[1], {
      success: false,
      error: 'Error in Alpha-name',
      data: { id: 2 },
    });
    assert.deepEqual(response.items[2], { success: false, error: 'Invalid message type' });
    assert.equal(response.items[0]?.success, true);
  });

  test('a failed item without an error text gets a fixed text', () => {
    const response = readSyncResponse(json({ success: true, data: [{ success: false }] }), [1]);
    assert.deepEqual(response, {
      kind: 'items',
      items: [{ success: false, error: MISSING_ERROR_TEXT }],
    });
  });

  test('Access denied is a rejection recognized as an account error', () => {
    const response = readSyncResponse(json({ success: false, error: ACCESS_DENIED }), [1, 2]);
    assert.deepEqual(response, { kind: 'rejected', accessDenied: true, error: 'Access denied' });
  });

  test('another top-level failure is a rejection that is not an account error', () => {
    const response = readSyncResponse(json({ success: false, error: 'Service unavailable' }), [1]);
    assert.deepEqual(response, {
      kind: 'rejected',
      accessDenied: false,
      error: 'Service unavailable',
    });
  });

  test('a rejection without error text still reads as a rejection', () => {
    const response = readSyncResponse(json({ success: false }), [1]);
    assert.deepEqual(response, {
      kind: 'rejected',
      accessDenied: false,
      error: MISSING_ERROR_TEXT,
    });
  });

  test('success written as an integer is read as a boolean', () => {
    const response = readSyncResponse(
      json({ success: 1, data: [{ success: 0, error: 'x' }] }),
      [1],
    );
    assert.deepEqual(response, { kind: 'items', items: [{ success: false, error: 'x' }] });
  });

  test('ids are compared as strings', () => {
    const response = readSyncResponse(
      json({ success: true, data: [{ success: true, data: { id: '42' } }] }),
      [42],
    );
    assert.equal(response.kind, 'items');
  });

  test('an item id is not checked when its operation had none', () => {
    const body = json({
      success: true,
      data: [{ success: true, data: { id: 'tpl-7', text: 'hi' } }],
    });
    assert.equal(readSyncResponse(body, [undefined]).kind, 'items');
  });

  test('array payloads (sender lists) are not checked for ids', () => {
    const body = json({
      success: true,
      data: [{ success: true, data: [{ name: 'FERRY', status: 'active' }] }],
    });
    assert.equal(readSyncResponse(body, [undefined]).kind, 'items');
  });

  const transportCases: readonly {
    name: string;
    body: string;
    ids: readonly unknown[];
    message: RegExp;
  }[] = [
    {
      name: 'a body that is not JSON',
      body: '<html>502 Bad Gateway</html>',
      ids: [1],
      message: /not JSON/,
    },
    { name: 'an empty body', body: '', ids: [1], message: /not JSON/ },
    { name: 'a JSON array', body: '[]', ids: [1], message: /not a JSON object/ },
    { name: 'a JSON null', body: 'null', ids: [1], message: /not a JSON object/ },
    {
      name: 'an answer without success',
      body: json({ data: [] }),
      ids: [],
      message: /no boolean success/,
    },
    {
      name: 'an answer with success as a string',
      body: json({ success: 'true', data: [] }),
      ids: [],
      message: /no boolean success/,
    },
    {
      name: 'an accepted answer without data',
      body: json({ success: true }),
      ids: [1],
      message: /no data array/,
    },
    {
      name: 'fewer items than operations',
      body: json({ success: true, data: [{ success: true, data: { id: 1 } }] }),
      ids: [1, 2],
      message: /1 items for 2 operations/,
    },
    {
      name: 'more items than operations',
      body: json({ success: true, data: [{ success: true }, { success: true }] }),
      ids: [1],
      message: /2 items for 1 operations/,
    },
    {
      name: 'an item that is not an object',
      body: json({ success: true, data: ['ok'] }),
      ids: [1],
      message: /item 0 is not an object/,
    },
    {
      name: 'an item without success',
      body: json({ success: true, data: [{ data: { id: 1 } }] }),
      ids: [1],
      message: /item 0 has no boolean success/,
    },
    {
      name: 'an item whose id differs from its operation',
      body: json({
        success: true,
        data: [
          { success: true, data: { id: 1 } },
          { success: true, data: { id: 3 } },
        ],
      }),
      ids: [1, 2],
      message: /item 1 carries id 3 for operation id 2/,
    },
    {
      name: 'items in swapped order',
      body: json({
        success: true,
        data: [
          { success: true, data: { id: 2 } },
          { success: true, data: { id: 1 } },
        ],
      }),
      ids: [1, 2],
      message: /item 0 carries id 2/,
    },
    {
      name: 'a failed item whose id differs',
      body: json({
        success: true,
        data: [{ success: false, error: ALPHA_NAME_ERROR, data: { id: 9 } }],
      }),
      ids: [1],
      message: /carries id 9/,
    },
  ];
  for (const row of transportCases) {
    test(`${row.name} is a transport failure`, () => {
      assertTransportError(() => readSyncResponse(row.body, row.ids), row.message);
    });
  }

  test('a transport failure does not quote the body (it may hold phone numbers)', () => {
    assert.throws(
      () => readSyncResponse('phone 79001234567 oops', [1]),
      (error: unknown) => error instanceof Error && !error.message.includes('79001234567'),
    );
  });
});

describe('readAsyncResponse', () => {
  test('an accepted request gives its request_id', () => {
    assert.deepEqual(readAsyncResponse(json({ success: true, request_id: 'req-9' })), {
      kind: 'accepted',
      requestId: 'req-9',
    });
  });

  test('a numeric request_id is read as a string', () => {
    assert.deepEqual(readAsyncResponse(json({ success: true, request_id: 17 })), {
      kind: 'accepted',
      requestId: '17',
    });
  });

  test('Access denied is a rejection recognized as an account error', () => {
    assert.deepEqual(readAsyncResponse(json({ success: false, error: 'Access denied' })), {
      kind: 'rejected',
      accessDenied: true,
      error: 'Access denied',
    });
  });

  test('another refusal is a rejection that is not an account error', () => {
    assert.deepEqual(readAsyncResponse(json({ success: false, error: 'Queue full' })), {
      kind: 'rejected',
      accessDenied: false,
      error: 'Queue full',
    });
  });

  const transportCases: readonly { name: string; body: string; message: RegExp }[] = [
    { name: 'a body that is not JSON', body: 'Internal Server Error', message: /not JSON/ },
    { name: 'a JSON string', body: '"ok"', message: /not a JSON object/ },
    {
      name: 'an answer without success',
      body: json({ request_id: 'r' }),
      message: /no boolean success/,
    },
    {
      name: 'an accepted answer without request_id',
      body: json({ success: true }),
      message: /no request_id/,
    },
    {
      name: 'an accepted answer with an empty request_id',
      body: json({ success: true, request_id: '' }),
      message: /no request_id/,
    },
    {
      name: 'an accepted answer with an object request_id',
      body: json({ success: true, request_id: {} }),
      message: /no request_id/,
    },
  ];
  for (const row of transportCases) {
    test(`${row.name} is a transport failure`, () => {
      assertTransportError(() => readAsyncResponse(row.body), row.message);
    });
  }
});

describe('readSendResult', () => {
  test('reads msg_id and parts of a send result', () => {
    assert.deepEqual(readSendResult({ id: 1, msg_id: 501, parts: 2, data: 0 }), {
      msgId: '501',
      parts: 2,
    });
  });
  test('parts may be missing', () => {
    assert.deepEqual(readSendResult({ id: 1, msg_id: 'g' }), { msgId: 'g', parts: undefined });
  });
  test('a payload without msg_id is not a send result', () => {
    assert.equal(readSendResult({ id: 1 }), undefined);
    assert.equal(readSendResult([{ msg_id: 1 }]), undefined);
    assert.equal(readSendResult(null), undefined);
  });
});
