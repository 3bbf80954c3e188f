import assert from 'node:assert/strict';
import { test } from 'node:test';
import { exactNumber, topLevelNumberSource } from '../../src/json/number-source.ts';

test('the source of a top-level number keeps the digits JSON.parse rounds away', () => {
  const text = '{"type":"sms","id":9007199254740993,"phone":79001234567}';
  assert.equal((JSON.parse(text) as { id: number }).id, 9007199254740992);
  assert.equal(topLevelNumberSource(text, 'id'), '9007199254740993');
  assert.equal(topLevelNumberSource('{"id":-12345678901234567890}', 'id'), '-12345678901234567890');
  assert.equal(topLevelNumberSource('{"id":1e400}', 'id'), '1e400');
  assert.equal(topLevelNumberSource('{"id":1.50}', 'id'), '1.50');
});

test('only the top level counts: a nested id, or one under an empty key, is not it', () => {
  assert.equal(topLevelNumberSource('{"viber":{"id":9007199254740993}}', 'id'), undefined);
  assert.equal(
    topLevelNumberSource('{"a":{"id":1},"id":9007199254740995,"b":[{"id":2}]}', 'id'),
    '9007199254740995',
  );
  assert.equal(
    topLevelNumberSource('{"":{"id":7,"":{"id":8}},"id":9007199254740997}', 'id'),
    '9007199254740997',
  );
});

test('no number there, or no JSON object at all, is undefined', () => {
  assert.equal(topLevelNumberSource('{"id":"9007199254740993"}', 'id'), undefined);
  assert.equal(topLevelNumberSource('{"type":"balance"}', 'id'), undefined);
  assert.equal(topLevelNumberSource('[{"id":1}]', 'id'), undefined);
  assert.equal(topLevelNumberSource('9007199254740993', 'id'), undefined);
  assert.equal(topLevelNumberSource('{oops', 'id'), undefined);
});

test('an exact number is written back as its source, inside any value', () => {
  const id = exactNumber('9007199254740993');
  assert.equal(JSON.stringify({ id, other: 1 }), '{"id":9007199254740993,"other":1}');
  assert.equal(
    JSON.stringify({ ...{ id }, truncated: true }),
    '{"id":9007199254740993,"truncated":true}',
  );
  assert.equal(JSON.stringify([exactNumber('1e400')]), '[1e400]');
  assert.throws(() => exactNumber('9007199254740993 '), SyntaxError);
});
