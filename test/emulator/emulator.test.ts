import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  readAsyncResponse,
  readSyncResponse,
  validateOperation,
  validateStatusCallback,
} from '../../src/contract/index.ts';
import {
  INSUFFICIENT_BALANCE,
  MESSAGE_NOT_FOUND,
  PENDING_STATUS,
  REQUEST_REFUSED,
  WRONG_CONTENT_TYPE,
} from '../../src/emulator/index.ts';
import {
  API_KEY,
  createHttpClient,
  PHONE,
  sleep,
  sms,
  startCallbackReceiver,
  startEmulator,
} from './emulator-fixtures.ts';

const rcsFields = {
  phone: PHONE,
  rcs_message: 'Hello over RCS',
  rcs_signature: 'ferry',
  rcs_image: 'https://example.com/a.png',
  rcs_button: 'Open',
  rcs_link: 'https://example.com/',
};

/** One valid operation of every type, in the spec's order, and the keys its item `data` must carry. */
const everyOperation: ReadonlyArray<{
  operation: Record<string, unknown>;
  keys: readonly string[] | 'array';
}> = [
  { operation: { type: 'balance' }, keys: ['amount', 'currency'] },
  {
    operation: { type: 'call/otp', id: 10, phone: PHONE },
    keys: ['id', 'msg_id', 'code', 'caller', 'fee'],
  },
  {
    operation: { type: 'hlr', id: 11, phone: PHONE },
    keys: ['phone', 'status', 'imsi', 'mccmnc', 'ported', 'network'],
  },
  {
    operation: {
      type: 'pipeline',
      id: 12,
      phone: PHONE,
      pipeline: ['viber', 'sms'],
      viber: { message: 'Hi', signature: 'ferry', type: 'text' },
      sms: { message: 'Hi', signature: 'ferry' },
    },
    keys: ['id', 'msg_id', 'parts', 'data'],
  },
  { operation: { type: 'rcs', id: 13, ...rcsFields }, keys: ['id', 'msg_id', 'parts', 'data'] },
  {
    operation: { type: 'rcs+sms', id: 14, ...rcsFields, sms_message: 'Hi', sms_signature: 'ferry' },
    keys: ['id', 'msg_id', 'parts', 'data'],
  },
  {
    operation: {
      type: 'rcs+viber+sms',
      id: 15,
      ...rcsFields,
      sms_message: 'Hi',
      sms_signature: 'ferry',
      viber_type: 'text',
      viber_signature: 'Acme',
      viber_message: 'Hi',
    },
    keys: ['id', 'msg_id', 'parts', 'data'],
  },
  { operation: { type: 'sender' }, keys: 'array' },
  { operation: sms(16), keys: ['id', 'msg_id', 'parts', 'data'] },
  { operation: { type: 'status', id: 16 }, keys: ['id', 'msg_id', 'type', 'status', 'updated'] },
  {
    operation: { type: 'telegram', id: 17, phone: PHONE, message: '123456' },
    keys: ['id', 'msg_id', 'parts', 'data'],
  },
  {
    operation: { type: 'template/create', template: 'Code {code}', name: 'otp' },
    keys: ['id', 'name', 'text', 'characters', 'parts', 'created_at'],
  },
  { operation: { type: 'template/delete', id: 'none' }, keys: ['deleted'] },
  { operation: { type: 'template/list' }, keys: 'array' },
  {
    operation: { type: 'template/viber/create', name: 'promo', text: 'Sale' },
    keys: ['id', 'name', 'text', 'created_at'],
  },
  { operation: { type: 'template/viber/delete', id: 999 }, keys: ['deleted'] },
  { operation: { type: 'template/viber/list' }, keys: 'array' },
  {
    operation: {
      type: 'viber',
      id: 18,
      phone: PHONE,
      viber_type: 'text',
      viber_signature: 'ferry',
      viber_message: 'Hi',
    },
    keys: ['id', 'msg_id', 'parts', 'data'],
  },
  {
    operation: { type: 'viber+sms', id: 19, phone: PHONE, viber_message: 'Hi', sms_message: 'Hi' },
    keys: ['id', 'msg_id', 'parts', 'data'],
  },
  {
    operation: { type: 'voice', id: 20, phone: PHONE, text: 'Your code is 1 2 3 4' },
    keys: ['id', 'msg_id', 'parts', 'data'],
  },
];

test('every operation type answers its documented payload shape, one item per operation in order', async (t) => {
  const emulator = await startEmulator(t);
  const client = createHttpClient(t);
  const answer = await client.sync(
    emulator.url,
    everyOperation.map((entry) => entry.operation),
  );
  assert.equal(answer.success, true);
  assert.equal(answer.data?.length, 20);
  everyOperation.forEach((entry, index) => {
    const item = answer.data?.[index];
    assert.equal(item?.success, true, `${String(entry.operation.type)}: ${item?.error ?? ''}`);
    if (entry.keys === 'array') {
      assert.ok(Array.isArray(item?.data), `${String(entry.operation.type)} data is an array`);
    } else {
      for (const key of entry.keys)
        assert.ok(key in (item?.data ?? {}), `${String(entry.operation.type)} has ${key}`);
    }
    if (entry.keys !== 'array' && entry.keys.includes('msg_id')) {
      assert.equal(item?.data?.id, entry.operation.id, 'send items echo the client id');
    }
  });
  const msgIds = answer.data?.flatMap((item, index) =>
    everyOperation[index]?.operation.type !== 'status' && item.data && 'msg_id' in item.data
      ? [item.data.msg_id]
      : [],
  );
  assert.equal(new Set(msgIds).size, msgIds?.length, 'msg_id values are unique');
  const otp = answer.data?.[1]?.data as { code: string; caller: number; fee: number };
  assert.match(otp.code, /^\d{4}$/);
  assert.ok(String(otp.caller).endsWith(otp.code), 'the calling number ends with the code');
  const hlr = answer.data?.[2]?.data as { network: { origin: { country: { prefix: number } } } };
  assert.equal(hlr.network.origin.country.prefix, 380);
  const senders = answer.data?.[7]?.data as unknown as Array<{ name: string; status: string }>;
  assert.deepEqual(
    senders.map((sender) => sender.name),
    ['ferry', 'Acme'],
  );
  assert.equal(
    answer.data?.[9]?.data?.msg_id,
    answer.data?.[8]?.data?.msg_id,
    'status shows the accepted sms',
  );
});

test('a wrong or missing key is Access denied with no data', async (t) => {
  const emulator = await startEmulator(t);
  const client = createHttpClient(t);
  for (const body of [
    { auth: 'wrong', data: [{ type: 'balance' }] },
    { data: [{ type: 'balance' }] },
  ]) {
    const answer = await client.post(`${emulator.url}/api/json.php`, body);
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.text), { success: false, error: 'Access denied' });
  }
  const asyncAnswer = await client.async(emulator.url, [sms(1)], 'wrong');
  assert.deepEqual(asyncAnswer, { success: false, error: 'Access denied' });
  assert.deepEqual(emulator.stats().sendsById, {});
});

test('a request without the JSON content type is refused with HTTP 200 and success false', async (t) => {
  const emulator = await startEmulator(t);
  const client = createHttpClient(t);
  const envelope = { auth: API_KEY, data: [sms(1)] };
  for (const contentType of [null, 'text/plain', 'application/x-www-form-urlencoded']) {
    const answer = await client.post(`${emulator.url}/api/json.php`, envelope, { contentType });
    assert.equal(answer.status, 200);
    assert.deepEqual(JSON.parse(answer.text), { success: false, error: WRONG_CONTENT_TYPE });
  }
  const withCharset = await client.post(`${emulator.url}/api/json.php`, envelope, {
    contentType: 'Application/JSON; charset=utf-8',
  });
  assert.equal(JSON.parse(withCharset.text).success, true);
  assert.deepEqual(emulator.stats().sendsById, { '1': 1 });
});

test('other methods get 405, other paths 404, bodies that are not envelopes a top-level error', async (t) => {
  const emulator = await startEmulator(t);
  const client = createHttpClient(t);
  const get = await client.get(`${emulator.url}/api/json.php`);
  assert.equal(get.status, 405);
  assert.equal(get.headers.allow, 'POST');
  assert.equal((await client.post(`${emulator.url}/api/other.php`, {})).status, 404);
  const notJson = await client.post(`${emulator.url}/api/json.php`, '{"auth":');
  assert.deepEqual(JSON.parse(notJson.text), { success: false, error: 'Invalid JSON' });
  const empty = await client.sync(emulator.url, []);
  assert.equal(empty.success, false);
  assert.match(empty.error ?? '', /^data: /);
  assert.equal(empty.data, undefined);
});

test('a body over the size limit gets HTTP 413', async (t) => {
  const emulator = await startEmulator(t, { maxBodyBytes: 1024 });
  const client = createHttpClient(t);
  const answer = await client.post(`${emulator.url}/api/json.php`, {
    auth: API_KEY,
    data: [sms(1, { sms_message: 'x'.repeat(2048) })],
  });
  assert.equal(answer.status, 413);
  assert.deepEqual(emulator.stats().sendsById, {});
});

test('invalid, unknown-alpha-name and whatsapp items fail alone, in order, without touching the others', async (t) => {
  const emulator = await startEmulator(t);
  const client = createHttpClient(t);
  const answer = await client.sync(emulator.url, [
    sms(1),
    sms(2, { sms_lifetime: 60 }),
    sms(3, { sms_signature: 'Unknown' }),
    { type: 'whatsapp', id: 4, phone: PHONE },
    { type: 'fax', id: 5 },
    sms(6, { phone: '+380501234567' }),
    {
      type: 'pipeline',
      id: 7,
      phone: PHONE,
      pipeline: ['sms'],
      sms: { message: 'Hi', signature: 'Unknown' },
    },
    'not an object',
    sms(9),
  ]);
  assert.equal(answer.success, true);
  const summary = answer.data?.map((item) => [item.success, item.error, item.data?.id]);
  assert.deepEqual(summary?.[0]?.slice(0, 1), [true]);
  assert.deepEqual(summary?.[1], [
    false,
    'sms_lifetime: must be between 3600 and 259200 seconds',
    2,
  ]);
  assert.deepEqual(summary?.[2], [false, 'Error in Alpha-name', 3]);
  assert.deepEqual(summary?.[3], [false, 'Invalid message type', 4]);
  const refusedByFerry = validateOperation({ type: 'whatsapp', id: 4, phone: PHONE });
  assert.equal(
    refusedByFerry.ok ? '' : refusedByFerry.message,
    summary?.[3]?.[1],
    'ferry refuses whatsapp with the very words the gateway uses',
  );
  assert.deepEqual(summary?.[4], [false, 'Invalid message type', 5]);
  assert.equal(summary?.[5]?.[0], false);
  assert.match(String(summary?.[5]?.[1]), /^phone: /);
  assert.deepEqual(summary?.[6], [false, 'Error in Alpha-name', 7]);
  assert.equal(summary?.[7]?.[0], false);
  assert.equal(answer.data?.[7]?.data, undefined, 'no id to echo');
  assert.deepEqual(summary?.[8]?.slice(0, 1), [true]);
  assert.deepEqual(emulator.stats().sendsById, { '1': 1, '9': 1 });
});

test('the balance falls with billed parts and a send it cannot cover fails', async (t) => {
  const emulator = await startEmulator(t, { initialBalance: 0.05, pricePerPart: 0.01 });
  const client = createHttpClient(t);
  const answer = await client.sync(emulator.url, [
    sms(1, { sms_message: 'a'.repeat(160) }), // 1 part (GSM-7)
    sms(2, { sms_message: 'a'.repeat(161) }), // 2 parts
    sms(3, { sms_message: 'ж'.repeat(71) }), // 2 parts (UCS-2)
    { type: 'balance' },
    sms(4),
  ]);
  assert.deepEqual(
    answer.data?.slice(0, 3).map((item) => item.data?.parts),
    [1, 2, 2],
  );
  assert.deepEqual(answer.data?.[3]?.data, { amount: 0, currency: 'EUR' });
  assert.deepEqual(answer.data?.[4], {
    success: false,
    error: INSUFFICIENT_BALANCE,
    data: { id: 4 },
  });
  assert.equal(emulator.stats().balance, 0);
});

test('status shows an accepted message pending, then final; an unknown id fails', async (t) => {
  const emulator = await startEmulator(t, { knobs: { callbackDelayMs: 100, viberReplyRate: 1 } });
  const client = createHttpClient(t);
  const viber = {
    type: 'viber',
    id: 2,
    phone: PHONE,
    viber_type: 'text',
    viber_signature: 'ferry',
    viber_message: 'Hi',
  };
  const sent = await client.sync(emulator.url, [sms(1), viber]);
  const early = await client.sync(emulator.url, [
    { type: 'status', id: 1 },
    { type: 'status', id: 99 },
  ]);
  assert.equal(early.data?.[0]?.data?.status, PENDING_STATUS);
  assert.equal(early.data?.[0]?.data?.msg_id, sent.data?.[0]?.data?.msg_id);
  assert.deepEqual(early.data?.[1], { success: false, error: MESSAGE_NOT_FOUND, data: { id: 99 } });
  await sleep(150);
  const late = await client.sync(emulator.url, [
    { type: 'status', id: 1 },
    { type: 'status', id: 2 },
  ]);
  const smsRecord = late.data?.[0]?.data as Record<string, unknown>;
  assert.equal(smsRecord.status, 'DELIVERED');
  assert.equal(smsRecord.type, 'sms');
  assert.match(String(smsRecord.updated), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00$/);
  const viberRecord = late.data?.[1]?.data as {
    status: string;
    type: string;
    replies: Array<{ datetime: string }>;
  };
  assert.equal(viberRecord.status, 'REPLIED');
  assert.equal(viberRecord.type, 'viber');
  assert.ok(viberRecord.replies.length >= 1);
});

test('SMS templates are created, listed and deleted by id and by exact text', async (t) => {
  const emulator = await startEmulator(t);
  const client = createHttpClient(t);
  const created = await client.sync(emulator.url, [
    { type: 'template/create', template: 'Code {code}', name: 'otp' },
    { type: 'template/create', template: 'Hello {name}' },
    { type: 'template/create', template: 'Hello {name}' },
  ]);
  const firstId = created.data?.[0]?.data?.id;
  assert.equal(typeof firstId, 'string');
  assert.equal(created.data?.[1]?.data?.name, null);
  const listed = await client.sync(emulator.url, [{ type: 'template/list' }]);
  assert.equal((listed.data?.[0]?.data as unknown as unknown[] | undefined)?.length, 3);
  const deleted = await client.sync(emulator.url, [
    { type: 'template/delete', id: firstId },
    { type: 'template/delete', template: 'Hello {name}' },
    { type: 'template/delete', template: 'Hello {name}' },
    { type: 'template/list' },
  ]);
  assert.deepEqual(
    deleted.data?.map((item) => item.data),
    [{ deleted: 1 }, { deleted: 2 }, { deleted: 0 }, []],
  );
});

test('Viber templates are kept as given and listed and deleted by id', async (t) => {
  const emulator = await startEmulator(t);
  const client = createHttpClient(t);
  const created = await client.sync(emulator.url, [
    { type: 'template/viber/create', name: 'promo', text: 'Sale' },
  ]);
  const template = created.data?.[0]?.data as Record<string, unknown>;
  assert.equal(template.name, 'promo');
  assert.equal(template.type, undefined);
  const afterDelete = await client.sync(emulator.url, [
    { type: 'template/viber/list' },
    { type: 'template/viber/delete', id: template.id },
    { type: 'template/viber/list' },
  ]);
  assert.deepEqual(afterDelete.data?.[0]?.data, [template]);
  assert.deepEqual(afterDelete.data?.[1]?.data, { deleted: 1 });
  assert.deepEqual(afterDelete.data?.[2]?.data, []);
});

test('the http500 knob answers HTTP 500 and processes nothing', async (t) => {
  const emulator = await startEmulator(t, { knobs: { http500Rate: 1 } });
  const client = createHttpClient(t);
  const answer = await client.post(`${emulator.url}/api/json.php`, {
    auth: API_KEY,
    data: [sms(1)],
  });
  assert.equal(answer.status, 500);
  assert.deepEqual(emulator.stats().sendsById, {});
  assert.equal(emulator.stats().faults.http500Rate, 1);
});

test('the http429 and http503 knobs answer with Retry-After and process nothing', async (t) => {
  const emulator = await startEmulator(t, { knobs: { http429Rate: 1, retryAfterMs: 2_500 } });
  const client = createHttpClient(t);
  const send = () => client.post(`${emulator.url}/api/json.php`, { auth: API_KEY, data: [sms(1)] });
  const throttled = await send();
  assert.equal(throttled.status, 429);
  assert.equal(throttled.headers['retry-after'], '3', 'whole seconds, rounded up');
  emulator.setKnobs({ http429Rate: 0, http503Rate: 1, retryAfterMs: 0 });
  const unavailable = await send();
  assert.equal(unavailable.status, 503);
  assert.equal(unavailable.headers['retry-after'], undefined, 'retryAfterMs 0 sends none');
  assert.deepEqual(emulator.stats().sendsById, {});
  assert.deepEqual(
    [emulator.stats().faults.http429Rate, emulator.stats().faults.http503Rate],
    [1, 1],
  );
});

test('the malformed knob answers a body that is not JSON, after processing', async (t) => {
  const emulator = await startEmulator(t, { knobs: { malformedRate: 1 } });
  const client = createHttpClient(t);
  const answer = await client.post(`${emulator.url}/api/json.php`, {
    auth: API_KEY,
    data: [sms(1)],
  });
  assert.equal(answer.status, 200);
  assert.throws(() => JSON.parse(answer.text));
  assert.deepEqual(emulator.stats().sendsById, { '1': 1 });
});

test('the missing-item knob answers one item fewer than operations', async (t) => {
  const emulator = await startEmulator(t, { knobs: { missingItemRate: 1 } });
  const client = createHttpClient(t);
  const answer = await client.sync(emulator.url, [sms(1), sms(2), sms(3)]);
  assert.equal(answer.success, true);
  assert.equal(answer.data?.length, 2);
  assert.deepEqual(emulator.stats().sendsById, { '1': 1, '2': 1, '3': 1 });
});

test('the lost-answer knob processes the request, then drops the connection; status knows the id', async (t) => {
  const emulator = await startEmulator(t, { knobs: { lostAnswerRate: 1 } });
  const client = createHttpClient(t);
  await assert.rejects(
    client.post(`${emulator.url}/api/json.php`, { auth: API_KEY, data: [sms(41)] }),
  );
  emulator.setKnobs({ lostAnswerRate: 0 });
  const status = await client.sync(emulator.url, [{ type: 'status', id: 41 }]);
  assert.equal(status.data?.[0]?.success, true);
  assert.deepEqual(emulator.stats().sendsById, { '41': 1 });
});

test('the slow-answer knob processes the request and answers past the client timeout', async (t) => {
  const emulator = await startEmulator(t, { knobs: { slowAnswerRate: 1, slowAnswerMs: 1_000 } });
  const client = createHttpClient(t);
  await assert.rejects(
    client.post(
      `${emulator.url}/api/json.php`,
      { auth: API_KEY, data: [sms(42)] },
      { timeoutMs: 200 },
    ),
  );
  assert.deepEqual(emulator.stats().sendsById, { '42': 1 });
});

test('the timeout knob holds the request unanswered and processes nothing', async (t) => {
  const emulator = await startEmulator(t, { knobs: { timeoutRate: 1, hangMs: 2_000 } });
  const client = createHttpClient(t);
  const started = Date.now();
  await assert.rejects(
    client.post(
      `${emulator.url}/api/json.php`,
      { auth: API_KEY, data: [sms(43)] },
      { timeoutMs: 300 },
    ),
  );
  assert.ok(Date.now() - started >= 250);
  assert.deepEqual(emulator.stats().sendsById, {});
});

test('the latency knob delays every answer', async (t) => {
  const emulator = await startEmulator(t, { knobs: { latencyMs: 150 } });
  const client = createHttpClient(t);
  const started = Date.now();
  const answer = await client.sync(emulator.url, [{ type: 'balance' }]);
  assert.equal(answer.success, true);
  assert.ok(Date.now() - started >= 140, `took ${Date.now() - started} ms`);
});

test('the emulator records its own answer time per envelope size, until a reset', async (t) => {
  const emulator = await startEmulator(t, { knobs: { latencyMs: 60 } });
  const client = createHttpClient(t);
  await client.sync(emulator.url, [{ type: 'balance' }]);
  await client.sync(
    emulator.url,
    Array.from({ length: 11 }, () => ({ type: 'balance' })),
  );
  const { small, large, eventLoopDelay } = emulator.stats().answerTimes;
  assert.equal(small.count, 1);
  assert.equal(large.count, 1);
  assert.ok(small.p99Ms >= 55 && small.maxMs < 1_000, `small ${JSON.stringify(small)}`);
  assert.ok(large.p50Ms >= 55, `large ${JSON.stringify(large)}`);
  assert.ok(eventLoopDelay.maxMs >= 0);
  emulator.reset();
  assert.equal(emulator.stats().answerTimes.small.count, 0);
  assert.equal(emulator.stats().answerTimes.large.count, 0);
});

test('fault rates below 1 hit about their share of requests', async (t) => {
  const emulator = await startEmulator(t, { knobs: { http500Rate: 0.3, malformedRate: 0.2 } });
  const client = createHttpClient(t);
  let http500 = 0;
  let malformed = 0;
  for (let index = 0; index < 200; index += 1) {
    const answer = await client.post(`${emulator.url}/api/json.php`, {
      auth: API_KEY,
      data: [{ type: 'balance' }],
    });
    if (answer.status === 500) http500 += 1;
    else if (!answer.text.endsWith('}')) malformed += 1;
  }
  assert.ok(http500 > 35 && http500 < 85, `http500 ${http500}`);
  assert.ok(malformed > 20 && malformed < 60, `malformed ${malformed}`);
  assert.equal(emulator.stats().faults.http500Rate, http500);
});

test('a sync send with a hook gets its final-state callback, retried until acknowledged', async (t) => {
  const receiver = await startCallbackReceiver(t);
  const emulator = await startEmulator(t, {
    knobs: { callbackDelayMs: 20 },
    callbacks: { firstRetryDelayMs: 20 },
  });
  const client = createHttpClient(t);
  receiver.failNext = 2;
  const answer = await client.sync(emulator.url, [sms(51, { hook: `${receiver.url}/cb/token` })]);
  const [callback] = await receiver.waitFor(1);
  assert.equal(receiver.attempts, 3, 'two refused attempts, then the acknowledged one');
  assert.equal(callback?.path, '/cb/token');
  assert.equal(callback?.contentType, 'application/json');
  assert.deepEqual(validateStatusCallback(callback?.body).ok, true);
  assert.equal(callback?.body.success, true);
  assert.equal(callback?.body.id, '51');
  assert.equal(callback?.body.msg_id, answer.data?.[0]?.data?.msg_id);
  assert.equal(callback?.body.status, 'DELIVERED');
  assert.equal(callback?.body.type, 'sms');
  assert.equal(callback?.body.request_id, undefined);
  assert.equal(await emulator.whenCallbacksIdle(2_000), true);
  assert.equal(emulator.stats().callbacksSent, 1);
  assert.equal(emulator.stats().callbacksFailed, 0);
});

test('a callback never acknowledged is given up after the bounded attempts', async (t) => {
  const receiver = await startCallbackReceiver(t);
  const emulator = await startEmulator(t, {
    knobs: { callbackDelayMs: 0 },
    callbacks: { firstRetryDelayMs: 10, maxAttempts: 3 },
  });
  const client = createHttpClient(t);
  receiver.failNext = 100;
  await client.sync(emulator.url, [sms(52, { hook: `${receiver.url}/cb` })]);
  assert.equal(await emulator.whenCallbacksIdle(2_000), true);
  assert.equal(receiver.attempts, 3);
  assert.equal(emulator.stats().callbacksFailed, 1);
  assert.equal(emulator.stats().callbacksSent, 0);
});

test('a failed delivery ends UNDELIVERED with callback success false', async (t) => {
  const receiver = await startCallbackReceiver(t);
  const emulator = await startEmulator(t, {
    knobs: { deliveryFailureRate: 1, callbackDelayMs: 10 },
  });
  const client = createHttpClient(t);
  await client.sync(emulator.url, [sms(53, { hook: `${receiver.url}/cb` })]);
  const [callback] = await receiver.waitFor(1);
  assert.equal(callback?.body.success, false);
  assert.equal(callback?.body.status, 'UNDELIVERED');
  assert.equal(typeof callback?.body.error, 'string');
  assert.equal(validateStatusCallback(callback?.body).ok, true);
});

test('an async request is answered with a request_id and its messages call back with it', async (t) => {
  const receiver = await startCallbackReceiver(t);
  const emulator = await startEmulator(t, { knobs: { callbackDelayMs: 20 } });
  const client = createHttpClient(t);
  const hook = `${receiver.url}/cb`;
  const answer = await client.async(emulator.url, [
    sms(61, { hook }),
    sms(62, { hook, sms_signature: 'Unknown' }),
    sms(63),
  ]);
  assert.equal(answer.success, true);
  assert.equal(typeof answer.request_id, 'string');
  assert.equal(answer.data, undefined);
  const callbacks = await receiver.waitFor(2);
  const byId = new Map(callbacks.map((callback) => [callback.body.id, callback.body]));
  assert.equal(byId.get('61')?.status, 'DELIVERED');
  assert.equal(byId.get('61')?.request_id, answer.request_id);
  assert.equal(typeof byId.get('61')?.msg_id, 'string');
  assert.equal(byId.get('62')?.status, 'REJECTED');
  assert.equal(byId.get('62')?.error, 'Error in Alpha-name');
  assert.equal(byId.get('62')?.request_id, answer.request_id);
  for (const callback of callbacks) assert.equal(validateStatusCallback(callback.body).ok, true);
  assert.deepEqual(emulator.stats().envelopes, { sync: 0, async: 1 });
  assert.deepEqual(emulator.stats().sendsById, { '61': 1, '63': 1 });
  const status = await client.sync(emulator.url, [{ type: 'status', id: 63 }]);
  assert.equal(status.data?.[0]?.success, true);
});

test('a refused async request sends REJECTED to every hook, pipeline included, and sends nothing', async (t) => {
  const receiver = await startCallbackReceiver(t);
  const emulator = await startEmulator(t, { knobs: { asyncRefuseRate: 1, callbackDelayMs: 0 } });
  const client = createHttpClient(t);
  const hook = `${receiver.url}/cb`;
  const answer = await client.async(emulator.url, [
    sms(71, { hook }),
    {
      type: 'pipeline',
      id: 72,
      phone: PHONE,
      pipeline: ['sms'],
      sms: { message: 'Hi', signature: 'ferry' },
      hook,
    },
    sms(73),
  ]);
  assert.equal(answer.success, true);
  const callbacks = await receiver.waitFor(2);
  assert.deepEqual(callbacks.map((callback) => callback.body.id).sort(), ['71', '72']);
  for (const { body } of callbacks) {
    assert.equal(body.success, false);
    assert.equal(body.status, 'REJECTED');
    assert.equal(body.error, REQUEST_REFUSED);
    assert.equal(body.request_id, answer.request_id);
  }
  assert.deepEqual(emulator.stats().sendsById, {});
  assert.equal(emulator.stats().faults.asyncRefused, 1);
});

test('pipeline statuses go to the account notification URL, not to the hook', async (t) => {
  const hookReceiver = await startCallbackReceiver(t);
  const notifications = await startCallbackReceiver(t);
  const emulator = await startEmulator(t, {
    notificationUrl: `${notifications.url}/account`,
    knobs: { callbackDelayMs: 10 },
  });
  const client = createHttpClient(t);
  const answer = await client.sync(emulator.url, [
    {
      type: 'pipeline',
      id: 81,
      phone: PHONE,
      pipeline: ['voice', 'sms'],
      voice: { gender: 'female', language: 'en', name: 'en-GB-1' },
      sms: { message: 'Hi', signature: 'ferry' },
      hook: `${hookReceiver.url}/cb`,
    },
  ]);
  assert.equal(answer.data?.[0]?.success, true);
  const [notification] = await notifications.waitFor(1);
  assert.equal(notification?.path, '/account');
  assert.equal(notification?.body.id, '81');
  assert.equal(notification?.body.type, 'voice');
  assert.equal(typeof notification?.body.duration, 'number');
  assert.equal(validateStatusCallback(notification?.body).ok, true);
  await sleep(50);
  assert.equal(hookReceiver.attempts, 0);
});

test('the control route counts sends per id and duplicates, changes knobs and key, and resets', async (t) => {
  const emulator = await startEmulator(t);
  const client = createHttpClient(t);
  await client.sync(emulator.url, [sms(1), sms(2), sms(1)]);
  await client.sync(emulator.url, [sms(2)]);
  const stats = JSON.parse((await client.get(`${emulator.url}/__emulator/stats`)).text);
  assert.deepEqual(stats.sendsById, { '1': 2, '2': 2 });
  assert.deepEqual(stats.duplicates, ['1', '2']);
  assert.equal(stats.requests, 2);
  assert.deepEqual(stats.envelopes, { sync: 2, async: 0 });
  assert.equal(stats.operations, 4);
  const summary = JSON.parse(
    (await client.get(`${emulator.url}/__emulator/stats?sendsById=0`)).text,
  );
  assert.deepEqual(summary.sendsById, {});

  const knobs = await client.post(`${emulator.url}/__emulator/knobs`, {
    latencyMs: 5,
    http500Rate: 0.5,
  });
  assert.equal(knobs.status, 200);
  assert.equal(emulator.knobs.http500Rate, 0.5);
  const badKnob = await client.post(`${emulator.url}/__emulator/knobs`, { http500Rate: 2 });
  assert.equal(badKnob.status, 400);
  assert.match(JSON.parse(badKnob.text).error, /http500Rate/);
  assert.equal((await client.post(`${emulator.url}/__emulator/knobs`, { nope: 1 })).status, 400);
  assert.equal(emulator.knobs.http500Rate, 0.5, 'a refused change changes nothing');
  await client.post(`${emulator.url}/__emulator/knobs`, { http500Rate: 0, latencyMs: 0 });

  assert.equal(
    (await client.post(`${emulator.url}/__emulator/api-key`, { apiKey: 'new-key' })).status,
    200,
  );
  assert.equal((await client.sync(emulator.url, [{ type: 'balance' }])).error, 'Access denied');
  assert.equal((await client.sync(emulator.url, [{ type: 'balance' }], 'new-key')).success, true);

  assert.equal((await client.post(`${emulator.url}/__emulator/reset`, {})).status, 200);
  const afterReset = JSON.parse((await client.get(`${emulator.url}/__emulator/stats`)).text);
  assert.deepEqual(afterReset.sendsById, {});
  assert.deepEqual(afterReset.duplicates, []);
  assert.equal(afterReset.requests, 0);
  assert.equal((await client.get(`${emulator.url}/__emulator/nothing`)).status, 404);
});

test('a seeded emulator repeats its random choices', async (t) => {
  const codes: string[] = [];
  for (const _run of [1, 2]) {
    const emulator = await startEmulator(t, { seed: 1234 });
    const client = createHttpClient(t);
    const answer = await client.sync(emulator.url, [{ type: 'call/otp', id: 1, phone: PHONE }]);
    codes.push(String(answer.data?.[0]?.data?.code));
  }
  assert.equal(codes[0], codes[1]);
});

test("the emulator's answers read back with the contract's response readers", async (t) => {
  const emulator = await startEmulator(t);
  const client = createHttpClient(t);
  const operations = [
    sms(1),
    sms(2, { sms_signature: 'Unknown' }),
    { type: 'balance' },
    { type: 'whatsapp', id: 4 },
  ];
  const sync = await client.post(`${emulator.url}/api/json.php`, {
    auth: API_KEY,
    data: operations,
  });
  const read = readSyncResponse(
    sync.text,
    operations.map((operation) => (operation as { id?: unknown }).id),
  );
  assert.equal(read.kind, 'items');
  assert.deepEqual(read.kind === 'items' ? read.items.map((item) => item.success) : [], [
    true,
    false,
    true,
    false,
  ]);
  const denied = await client.post(`${emulator.url}/api/json.php`, {
    auth: 'wrong',
    data: operations,
  });
  assert.deepEqual(readSyncResponse(denied.text, [1, 2, undefined, 4]), {
    kind: 'rejected',
    accessDenied: true,
    error: 'Access denied',
  });
  const queued = await client.post(`${emulator.url}/v1/json`, { auth: API_KEY, data: [sms(5)] });
  assert.equal(readAsyncResponse(queued.text).kind, 'accepted');
});
