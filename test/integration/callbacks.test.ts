import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createLogger } from '../../src/observability/logger.ts';
import {
  postJson,
  rawPost,
  startReceiverHarness,
  TEST_TOKEN,
} from '../callbacks/callback-harness.ts';
import { testBrokers } from '../helpers/kafka.ts';

const brokers = testBrokers();
const ISO_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

test('a callback becomes one status event, acknowledged only after Kafka has it', async (t) => {
  const h = await startReceiverHarness(t, { brokers });
  const callback = {
    success: true,
    id: '1001',
    msg_id: '55501',
    type: 'sms',
    status: 'DELIVERED',
    updated: '2024-05-01T10:00:00+00:00',
    gateway_extra: { kept: [1, 'two'] },
  };
  const answer = await postJson(h.callbackUrl, callback);
  assert.equal(answer.status, 200);
  assert.deepEqual(JSON.parse(answer.body), { success: true });
  // The 200 came after the acknowledgement: the record is in the log already.
  assert.equal(await h.recordCount(), 1);

  const [event] = await h.collector.waitFor(1);
  assert.equal(event?.key, '1001');
  const { received_at: receivedAt, ...fields } = event?.value ?? {};
  assert.deepEqual(fields, { ...callback, updated: '2024-05-01T10:00:00.000Z' }, 'UTC ISO time');
  assert.match(String(receivedAt), ISO_UTC);
  assert.equal(await h.callbackCount('published', 'DELIVERED'), 1);
});

test('a REJECTED callback without id is keyed by request_id; without any id by msg_id', async (t) => {
  const h = await startReceiverHarness(t, { brokers });
  const rejected = {
    success: false,
    status: 'REJECTED',
    error: 'Request refused',
    updated: '2024-05-01T10:00:00+00:00',
    request_id: 'req-abc',
  };
  assert.equal((await postJson(h.callbackUrl, rejected)).status, 200);
  const byMsgId = { success: true, msg_id: '777', status: 'DELIVERED' };
  assert.equal((await postJson(h.callbackUrl, byMsgId)).status, 200);

  const events = await h.collector.waitFor(2);
  assert.equal(events[0]?.key, 'req-abc');
  assert.equal(events[0]?.value.status, 'REJECTED');
  assert.equal(events[0]?.value.error, 'Request refused');
  assert.equal(events[1]?.key, '777');
});

test('Viber replies with media and voice reply/duration reach the topic intact', async (t) => {
  const h = await startReceiverHarness(t, { brokers });
  const viber = {
    success: true,
    id: '2001',
    msg_id: '9001',
    type: 'viber',
    status: 'REPLIED',
    updated: '2024-05-01T10:00:00+02:00',
    replies: [
      { datetime: '2024-05-01T10:00:01+02:00', message: 'Yes' },
      {
        datetime: '2024-05-01T10:00:02+02:00',
        media: { url: 'https://media.example/r/1.jpg', filename: '1.jpg', filesize: 12345 },
      },
    ],
  };
  const voice = {
    success: true,
    id: '2002',
    type: 'voice',
    status: 'DELIVERED',
    updated: '2024-05-01T10:00:00+00:00',
    reply: '7',
    duration: 42,
  };
  assert.equal((await postJson(h.callbackUrl, viber)).status, 200);
  assert.equal((await postJson(h.callbackUrl, voice)).status, 200);
  const events = await h.collector.waitFor(2);
  const strip = (value: Record<string, unknown> | undefined) => {
    const { received_at: _receivedAt, ...rest } = value ?? {};
    return rest;
  };
  // Everything kept; only the times are written as UTC ISO.
  assert.deepEqual(strip(events[0]?.value), {
    ...viber,
    updated: '2024-05-01T08:00:00.000Z',
    replies: [
      { ...viber.replies[0], datetime: '2024-05-01T08:00:01.000Z' },
      { ...viber.replies[1], datetime: '2024-05-01T08:00:02.000Z' },
    ],
  });
  assert.deepEqual(strip(events[1]?.value), { ...voice, updated: '2024-05-01T10:00:00.000Z' });
});

test('a wrong or missing token gets 404 and writes nothing', async (t) => {
  const h = await startReceiverHarness(t, { brokers, collect: false });
  const callback = { success: true, id: '1', status: 'DELIVERED' };
  const base = h.server.url;
  for (const url of [
    `${base}/callbacks/wrong`,
    `${base}/callbacks/${encodeURIComponent(`${TEST_TOKEN}x`)}`,
    `${base}/callbacks/${encodeURIComponent(TEST_TOKEN.slice(0, -1))}`,
    `${base}/callbacks/%E0%A4%A`,
    `${base}/callbacks/`,
  ]) {
    const answer = await postJson(url, callback);
    assert.equal(answer.status, 404, url);
    assert.equal(answer.body, 'Not Found\n', url);
  }
  assert.equal(await h.recordCount(), 0);
  assert.equal(await h.callbackCount('unauthorized'), 2 + 1);
});

test('a JSON body is a status event whatever its Content-Type, or without one', async (t) => {
  const h = await startReceiverHarness(t, { brokers });
  const contentTypes = [
    undefined,
    'text/plain',
    'application/jsonx',
    'application/json; charset=latin1',
    'Application/JSON; charset="UTF-8"',
  ];
  for (const [index, contentType] of contentTypes.entries()) {
    const body = JSON.stringify({ success: true, id: String(index), status: 'DELIVERED' });
    const headers: Record<string, string> = { 'content-length': String(body.length) };
    if (contentType !== undefined) headers['content-type'] = contentType;
    const answer = await rawPost(h.callbackUrl, { headers, chunks: [body] });
    assert.equal(answer.status, 200, String(contentType));
    assert.deepEqual(JSON.parse(answer.body), { success: true });
  }
  const events = await h.collector.waitFor(contentTypes.length);
  assert.deepEqual(
    events.map((e) => e.key),
    ['0', '1', '2', '3', '4'],
  );
  assert.equal(await h.unparsedCount(), 0);
});

test('bodies that are no status event are kept raw, answered 200, and the receiver keeps working', async (t) => {
  // A body limit far above the deep body's size: the depth check alone must stop parsing.
  const h = await startReceiverHarness(t, { brokers, receiver: { maxBodyBytes: 1024 * 1024 } });
  const cases: [string, string, RegExp][] = [
    ['empty body', '', /empty/],
    ['malformed JSON', '{"success":true', /not JSON/],
    ['not an object', '[1,2,3]', /not a JSON object/],
    ['a JSON string', '"hello"', /not a JSON object/],
    ['null', 'null', /not a JSON object/],
    ['success missing', '{"id":"1"}', /success/],
    ['success of the wrong type', '{"success":"yes","id":"1"}', /success/],
    ['duration of the wrong type', '{"success":true,"id":"1","duration":"long"}', /duration/],
    ['replies not an array', '{"success":true,"id":"1","replies":{}}', /replies/],
    [
      'reply media url not a URI',
      '{"success":true,"id":"1","replies":[{"media":{"url":5}}]}',
      /replies/,
    ],
    ['__proto__ key', '{"success":true,"id":"1","__proto__":{"polluted":1}}', /__proto__/],
    ['nested __proto__', '{"success":true,"id":"1","x":{"__proto__":{"polluted":1}}}', /__proto__/],
    [
      'constructor.prototype',
      '{"success":true,"id":"1","constructor":{"prototype":{"a":1}}}',
      /__proto__/,
    ],
    ['100,000 deep', `${'['.repeat(100_000)}${']'.repeat(100_000)}`, /nested deeper/],
    [
      'deep inside a valid callback',
      `{"success":true,"id":"1","x":${'{"a":'.repeat(40)}1${'}'.repeat(40)}}`,
      /nested deeper/,
    ],
    [
      'no identifier at all',
      '{"success":true,"status":"DELIVERED"}',
      /none of id, msg_id, request_id/,
    ],
  ];
  for (const [name, body] of cases) {
    const answer = await postJson(h.callbackUrl, body);
    assert.equal(answer.status, 200, name);
    assert.deepEqual(JSON.parse(answer.body), { success: true, unparsed: true }, name);
  }
  // Sent again, each is recognised: written once.
  for (const [name, body] of cases) {
    const answer = await postJson(h.callbackUrl, body);
    assert.deepEqual(
      JSON.parse(answer.body),
      { success: true, unparsed: true, duplicate: true },
      name,
    );
  }
  const invalidUtf8 = Buffer.concat([
    Buffer.from('{"success":true,"id":"'),
    Buffer.from([0xff, 0xfe]),
    Buffer.from('"}'),
  ]);
  const utf8Answer = await rawPost(h.callbackUrl, {
    headers: { 'content-type': 'application/json', 'content-length': String(invalidUtf8.length) },
    chunks: [invalidUtf8],
  });
  assert.equal(utf8Answer.status, 200);
  assert.equal(({} as Record<string, unknown>).polluted, undefined);

  const records = await h.unparsed.waitFor(cases.length + 1);
  assert.equal(await h.unparsedCount(), cases.length + 1, 'each exactly once');
  for (const [index, [name, body, reason]] of cases.entries()) {
    const record = records[index];
    assert.equal(record?.value?.toString('utf8') ?? '', body, `${name}: the bytes as received`);
    assert.equal(record?.key, null);
    assert.equal(record?.headers['ferry-content-type'], 'application/json', name);
    assert.match(String(record?.headers['ferry-received-at']), ISO_UTC, name);
    assert.match(String(record?.headers['ferry-reason']), reason, name);
  }
  assert.deepEqual(records[cases.length]?.value, invalidUtf8, 'invalid UTF-8 kept byte for byte');
  assert.match(String(records[cases.length]?.headers['ferry-reason']), /UTF-8/);

  assert.equal(await h.recordCount(), 0, 'no status event from any of them');
  assert.equal(await h.callbackCount('unparsed'), cases.length + 1);
  assert.equal(await h.callbackCount('duplicate'), cases.length);
  const ok = await postJson(h.callbackUrl, { success: true, id: '1' });
  assert.equal(ok.status, 200);
  assert.equal(await h.recordCount(), 1);
});

test('an oversized body gets 413 with its beginning kept raw, declared or streamed, and its sender sees the 413', async (t) => {
  const h = await startReceiverHarness(t, { brokers, receiver: { maxBodyBytes: 1024 } });
  const big = JSON.stringify({ success: true, id: '1', pad: 'x'.repeat(2000) });
  const declared = await postJson(h.callbackUrl, big);
  assert.equal(declared.status, 413);
  assert.match(JSON.parse(declared.body).error, /larger than 1024 bytes/);
  const [kept] = await h.unparsed.waitFor(1);
  assert.equal(kept?.value?.toString('utf8'), big.slice(0, 1024), 'the first 1024 bytes');
  assert.equal(kept?.headers['ferry-truncated'], 'true');
  assert.equal(kept?.headers['ferry-original-bytes'], String(big.length));
  assert.match(String(kept?.headers['ferry-reason']), /larger than 1024 bytes/);

  // Chunked, no Content-Length: refused once past the limit, while the client keeps sending.
  // Other bytes than the declared one's: a kept beginning of its own, not a repeat. The rest
  // is read and dropped before the connection closes, so the client gets the 413 and no
  // broken pipe.
  const chunk = 'z'.repeat(512);
  const streamed = await rawPost(h.callbackUrl, {
    headers: { 'content-type': 'application/json' },
    chunks: ['{"success":true,"id":"1","pad":"', ...Array.from({ length: 200 }, () => chunk), '"}'],
    chunkDelayMs: 5,
  });
  assert.equal(streamed.status, 413);
  assert.equal(streamed.headers.connection, 'close');

  const exactly = JSON.stringify({ success: true, id: '2', pad: '' });
  const padded = JSON.stringify({ success: true, id: '2', pad: 'y'.repeat(1024 - exactly.length) });
  assert.equal(Buffer.byteLength(padded), 1024);
  assert.equal((await postJson(h.callbackUrl, padded)).status, 200);
  assert.equal(await h.recordCount(), 1);
  // The streamed one's beginning is kept too, without a declared length.
  const records = await h.unparsed.waitFor(2);
  assert.equal(records[1]?.value?.length, 1024);
  assert.equal(records[1]?.headers['ferry-original-bytes'], undefined);
});

test('a body that arrives too slowly gets 408', async (t) => {
  const h = await startReceiverHarness(t, {
    brokers,
    collect: false,
    receiver: { bodyTimeoutMs: 300 },
  });
  const answer = await rawPost(h.callbackUrl, {
    headers: { 'content-type': 'application/json' },
    chunks: ['{"success":', 'true', ',"id":"1"', '}'],
    chunkDelayMs: 200,
  });
  assert.equal(answer.status, 408);
  assert.equal(await h.recordCount(), 0);
});

test('a repeated callback is acknowledged and published once, also when concurrent', async (t) => {
  const h = await startReceiverHarness(t, { brokers });
  const callback = {
    success: true,
    id: '3001',
    status: 'DELIVERED',
    updated: '2024-05-01T10:00:00+00:00',
  };
  assert.deepEqual(JSON.parse((await postJson(h.callbackUrl, callback)).body), { success: true });
  const again = await postJson(h.callbackUrl, callback);
  assert.equal(again.status, 200);
  assert.deepEqual(JSON.parse(again.body), { success: true, duplicate: true });

  const concurrent = { ...callback, id: '3002' };
  const answers = await Promise.all(
    Array.from({ length: 8 }, () => postJson(h.callbackUrl, concurrent)),
  );
  assert.deepEqual(
    answers.map((a) => a.status),
    Array(8).fill(200),
  );

  // A later status of the same message is a new event.
  const later = { ...callback, status: 'READ', updated: '2024-05-01T10:05:00+00:00' };
  assert.equal((await postJson(h.callbackUrl, later)).status, 200);

  assert.equal(await h.recordCount(), 3);
  const events = await h.collector.waitFor(3);
  assert.deepEqual(
    events.map((e) => [e.key, e.value.status]),
    [
      ['3001', 'DELIVERED'],
      ['3002', 'DELIVERED'],
      ['3001', 'READ'],
    ],
  );
  assert.equal(await h.callbackCount('duplicate'), 1 + 7);
});

test('other methods on the route get 405', async (t) => {
  const h = await startReceiverHarness(t, { brokers, collect: false });
  const answer = await rawPost(h.callbackUrl, { method: 'GET' });
  assert.equal(answer.status, 405);
});

test('after stop() callbacks get 503 and are not published', async (t) => {
  const h = await startReceiverHarness(t, { brokers, collect: false });
  await h.receiver.stop();
  const answer = await postJson(h.callbackUrl, { success: true, id: '1' });
  assert.equal(answer.status, 503);
  assert.equal(answer.headers['retry-after'], '5');
  assert.equal(await h.recordCount(), 0);
});

test('the token never reaches the logs, whatever the callback', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-callbacks-log-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'ferry.log');
  // No `secrets` given to the logger: the receiver itself must not log the token or the path.
  const logger = createLogger({ level: 'trace', destination: file });
  const h = await startReceiverHarness(t, { brokers, collect: false, logger });
  await postJson(h.callbackUrl, { success: true, id: '1', status: 'DELIVERED' });
  await postJson(h.callbackUrl, '{"broken');
  await postJson(`${h.server.url}/callbacks/${encodeURIComponent(`${TEST_TOKEN}-nearly`)}`, {
    success: true,
  });
  await h.receiver.stop();
  await postJson(h.callbackUrl, { success: true, id: '2' });
  const text = await readFile(file, 'utf8');
  assert.ok(text.length > 0, 'nothing was logged');
  assert.equal(text.includes(TEST_TOKEN), false);
  assert.equal(text.includes(encodeURIComponent(TEST_TOKEN)), false);
  assert.equal(text.includes('test-token'), false);
});
