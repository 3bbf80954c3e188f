import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appendJsonFields } from '../../src/json/append-fields.ts';

test('fields go before the final brace; the rest of the text is untouched', () => {
  const text = '{"b":1.0,"a":"\\u00e9","a":2,"n":{"x":[1e2]}}';
  assert.equal(
    appendJsonFields(text, [['hook', 'https://h/"q"']]),
    '{"b":1.0,"a":"\\u00e9","a":2,"n":{"x":[1e2]},"hook":"https://h/\\"q\\""}',
  );
});

test('whitespace around the final brace and an empty object', () => {
  assert.equal(appendJsonFields(' { "a" : 1 } \n', [['h', 1]]), ' { "a" : 1 ,"h":1} \n');
  assert.equal(appendJsonFields('{ }', [['h', 1]]), '{ "h":1}');
  assert.equal(
    appendJsonFields('{}', [
      ['a', 1],
      ['b', [true]],
    ]),
    '{"a":1,"b":[true]}',
  );
});

test('a value ending in a brace inside a string does not fool the separator', () => {
  const text = '{"a":"{"}';
  assert.equal(appendJsonFields(text, [['h', 1]]), '{"a":"{","h":1}');
  assert.deepEqual(JSON.parse(appendJsonFields(text, [['h', 1]])), { a: '{', h: 1 });
});

test('names are kept as given, __proto__ included; unencodable values are skipped', () => {
  assert.equal(appendJsonFields('{"a":1}', [['__proto__', 1]]), '{"a":1,"__proto__":1}');
  assert.equal(appendJsonFields('{"a":1}', [['f', undefined]]), '{"a":1}');
});

test('text that is not an object is refused', () => {
  assert.throws(() => appendJsonFields('[1]', [['a', 1]]), TypeError);
  assert.throws(() => appendJsonFields('', [['a', 1]]), TypeError);
});
