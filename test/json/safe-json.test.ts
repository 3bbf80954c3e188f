import assert from 'node:assert/strict';
import { test } from 'node:test';
import { jsonNestingDepth, parseSafeJson } from '../../src/json/safe-json.ts';

test('nesting depth counts objects and arrays, not brackets inside strings', () => {
  assert.equal(jsonNestingDepth('1', 10), 0);
  assert.equal(jsonNestingDepth('{}', 10), 1);
  assert.equal(jsonNestingDepth('{"a":[{"b":{}}]}', 10), 4);
  assert.equal(jsonNestingDepth('{"a":"[[[[{{{{"}', 10), 1);
  assert.equal(jsonNestingDepth('{"a":"\\"[[[["}', 10), 1);
  assert.equal(jsonNestingDepth('[[],[],[[]]]', 10), 3);
});

test('nesting depth stops counting past the limit', () => {
  assert.equal(jsonNestingDepth('['.repeat(1_000_000), 32), 33);
});

test('a body nested 100,000 deep is refused without parsing', () => {
  const text = `${'['.repeat(100_000)}${']'.repeat(100_000)}`;
  const result = parseSafeJson(text, 32);
  assert.deepEqual(result, { ok: false, reason: 'body: nested deeper than 32 levels' });
});

test('a body at exactly the depth limit is parsed', () => {
  const text = `${'['.repeat(32)}${']'.repeat(32)}`;
  assert.equal(parseSafeJson(text, 32).ok, true);
});

test('malformed JSON is refused with a short reason', () => {
  for (const text of ['', '{', '{"success":true', 'nope', '{"a":1,}', '\u0000']) {
    assert.deepEqual(parseSafeJson(text, 32), { ok: false, reason: 'body: not valid JSON' }, text);
  }
});

test('__proto__ keys at any depth are refused, also when escaped', () => {
  for (const text of [
    '{"__proto__":{"polluted":true}}',
    '{"replies":[{"media":{"__proto__":{"x":1}}}]}',
    '{"\\u005f_proto__":{"polluted":true}}',
    '{"constructor":{"prototype":{"polluted":true}}}',
  ]) {
    const result = parseSafeJson(text, 32);
    assert.equal(result.ok, false, text);
    assert.match(result.ok ? '' : result.reason, /__proto__/);
  }
  assert.equal(({} as Record<string, unknown>).polluted, undefined);
});

test('plain values parse to the same value JSON.parse gives', () => {
  const text =
    '{"success":true,"id":"7","replies":[{"datetime":"2024-01-01T00:00:00+00:00"}],"x":null}';
  assert.deepEqual(parseSafeJson(text, 32), { ok: true, value: JSON.parse(text) });
});
