import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeCallbackBody, parseContentType } from '../../src/callbacks/callback-body.ts';

const json = '{"success":true,"id":"1","status":"DELIVERED"}';

test('JSON is read whatever the content type says, or without one', () => {
  for (const contentType of [
    'application/json',
    'application/json; charset=utf-8',
    'Application/JSON; charset="UTF-8"',
    'text/plain',
    'text/html; charset=utf-8',
    'application/octet-stream',
    'application/jsonx',
    '',
    undefined,
  ]) {
    const decoded = decodeCallbackBody(Buffer.from(json), contentType, 32);
    assert.equal(decoded.ok, true, String(contentType));
    if (decoded.ok) assert.deepEqual(decoded.value, JSON.parse(json));
  }
});

test('a declared charset is honoured, and a UTF-8 byte order mark is dropped', () => {
  const latin1 = Buffer.from('{"success":true,"id":"1","error":"refus\xe9"}', 'latin1');
  const decoded = decodeCallbackBody(latin1, 'application/json; charset=ISO-8859-1', 32);
  assert.ok(decoded.ok);
  assert.equal(decoded.value.error, 'refusé');
  const bom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]);
  assert.equal(decodeCallbackBody(bom, 'application/json', 32).ok, true);
  const unknownLabel = decodeCallbackBody(
    Buffer.from(json),
    'application/json; charset=x-none',
    32,
  );
  assert.equal(unknownLabel.ok, true, 'an unknown charset label falls back to UTF-8');
});

test('form-encoded receipts are read as strings, labelled or not', () => {
  const form = 'success=1&id=42&status=DELIVERED&updated=2024-05-01+10%3A00%3A00';
  for (const contentType of ['application/x-www-form-urlencoded', undefined, 'text/plain']) {
    const decoded = decodeCallbackBody(Buffer.from(form), contentType, 32);
    assert.ok(decoded.ok, String(contentType));
    assert.equal(decoded.format, 'form');
    assert.deepEqual(decoded.value, {
      success: '1',
      id: '42',
      status: 'DELIVERED',
      updated: '2024-05-01 10:00:00',
    });
  }
  const jsonInForm = decodeCallbackBody(Buffer.from(json), 'application/x-www-form-urlencoded', 32);
  assert.ok(jsonInForm.ok);
  assert.equal(jsonInForm.format, 'json', 'JSON mislabelled as a form is still JSON');
});

test('what cannot be read says why', () => {
  const cases: [string | Buffer, string | undefined, RegExp][] = [
    ['', 'application/json', /empty/],
    ['{"success":true', 'application/json', /not JSON/],
    ['[{"success":true,"id":"1"}]', 'application/json', /not a JSON object/],
    ['"hello"', undefined, /not a JSON object/],
    ['null', undefined, /not a JSON object/],
    ['hello there', 'text/plain', /not JSON/],
    [Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), 'application/json', /not valid UTF-8/],
    ['{"success":true,"__proto__":{"polluted":1}}', 'application/json', /__proto__/],
    ['{"a":{"constructor":{"prototype":{"b":1}}}}', 'application/json', /__proto__/],
    ['__proto__=1&id=2', 'application/x-www-form-urlencoded', /__proto__/],
    [`${'['.repeat(100_000)}${']'.repeat(100_000)}`, 'application/json', /deeper than 32/],
  ];
  for (const [body, contentType, reason] of cases) {
    const decoded = decodeCallbackBody(Buffer.from(body), contentType, 32);
    assert.equal(decoded.ok, false, String(body).slice(0, 40));
    if (!decoded.ok) assert.match(decoded.reason, reason, String(body).slice(0, 40));
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('large numeric ids keep every digit', () => {
  const decoded = decodeCallbackBody(
    Buffer.from('{"success":true,"id":12345678901234567890,"msg_id":7,"duration":1e400}'),
    undefined,
    32,
  );
  assert.ok(decoded.ok);
  assert.equal(decoded.value.id, '12345678901234567890');
  assert.equal(decoded.value.msg_id, 7, 'a safe integer stays a number until normalised');
});

test('content types are split into media type and charset', () => {
  assert.deepEqual(parseContentType('Application/JSON; Charset="UTF-8"'), {
    mediaType: 'application/json',
    charset: 'utf-8',
  });
  assert.deepEqual(parseContentType(undefined), { mediaType: '', charset: undefined });
});
