/**
 * The compile-time link between a record interface and its published schema: each
 * `@ts-expect-error` below is a drift the compiler must refuse (tsc fails when one compiles).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { always, everyValue, recordSchema, sometimes } from '../../src/json/record-schema.ts';

interface Sample {
  name: string;
  count?: number;
  state: 'on' | 'off';
}

const text = { title: 'sample', description: 'a sample', additionalProperties: false };

test('a property table that fits the interface becomes an object schema with its required list', () => {
  const schema = recordSchema<Sample, 'later'>()(text, {
    name: always({ type: 'string', description: 'the name' }),
    count: sometimes({ type: 'integer', description: 'how many' }),
    state: always({ type: 'string', enum: everyValue<Sample['state']>()(['on', 'off']) }),
    later: sometimes({ type: 'string', description: 'published ahead of the interface' }),
  });
  assert.deepEqual(schema.required, ['name', 'state']);
  assert.deepEqual(Object.keys(schema.properties as object), ['name', 'count', 'state', 'later']);
  assert.equal(schema.additionalProperties, false);
});

test('the compiler refuses a table that drifts from its interface', () => {
  const define = recordSchema<Sample>();
  const drifts = [
    // @ts-expect-error a property of the interface is missing
    () => define(text, { name: always({ type: 'string' }), state: always({ type: 'string' }) }),
    () =>
      define(text, {
        // @ts-expect-error a required property published as optional
        name: sometimes({ type: 'string' }),
        count: sometimes({ type: 'number' }),
        state: always({ type: 'string' }),
      }),
    () =>
      define(text, {
        // @ts-expect-error a JSON type that does not fit the property's type
        name: always({ type: 'number' }),
        count: sometimes({ type: 'number' }),
        state: always({ type: 'string' }),
      }),
    () =>
      define(text, {
        name: always({ type: 'string' }),
        count: sometimes({ type: 'number' }),
        state: always({ type: 'string' }),
        // @ts-expect-error a property the interface does not declare
        extra: sometimes({ type: 'string' }),
      }),
    // @ts-expect-error an enum missing a value of the union
    () => everyValue<Sample['state']>()(['on']),
    // @ts-expect-error an enum with a value the union does not have
    () => everyValue<Sample['state']>()(['on', 'off', 'dim']),
  ];
  assert.equal(drifts.length, 6);
});
