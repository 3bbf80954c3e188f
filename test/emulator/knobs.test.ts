import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyKnobs, defaultKnobs, knobEnvName, knobNames } from '../../src/emulator/knobs.ts';
import { FerryError } from '../../src/errors.ts';

test('applyKnobs changes only the named knobs', () => {
  const knobs = applyKnobs(defaultKnobs, { latencyMs: 20, http500Rate: 0.05 });
  assert.equal(knobs.latencyMs, 20);
  assert.equal(knobs.http500Rate, 0.05);
  assert.equal(knobs.callbackDelayMs, defaultKnobs.callbackDelayMs);
  assert.equal(defaultKnobs.latencyMs, 0, 'the defaults are not modified');
});

const refused: ReadonlyArray<{ name: string; changes: unknown; pattern: RegExp }> = [
  { name: 'an unknown knob', changes: { nope: 1 }, pattern: /^nope: unknown knob$/ },
  { name: 'a rate above 1', changes: { timeoutRate: 1.5 }, pattern: /^timeoutRate: / },
  { name: 'a negative rate', changes: { malformedRate: -0.1 }, pattern: /^malformedRate: / },
  { name: 'a fractional duration', changes: { latencyMs: 1.5 }, pattern: /^latencyMs: / },
  {
    name: 'a string value',
    changes: { latencyMs: '5' },
    pattern: /^latencyMs: must be a finite number$/,
  },
  {
    name: 'fault rates adding up past 1',
    changes: { http500Rate: 0.6, lostAnswerRate: 0.5 },
    pattern: /at most 1$/,
  },
  { name: 'a body that is not an object', changes: [1], pattern: /^knobs: / },
];

for (const { name, changes, pattern } of refused) {
  test(`applyKnobs refuses ${name} with a config error naming it`, () => {
    assert.throws(
      () => applyKnobs(defaultKnobs, changes),
      (error: unknown) =>
        error instanceof FerryError && error.code === 'config' && pattern.test(error.message),
    );
  });
}

test('every knob has an EMULATOR_ environment variable in upper snake case', () => {
  assert.equal(knobEnvName('http500Rate'), 'EMULATOR_HTTP500_RATE');
  assert.equal(knobEnvName('latencyMs'), 'EMULATOR_LATENCY_MS');
  assert.equal(knobEnvName('lostAnswerRate'), 'EMULATOR_LOST_ANSWER_RATE');
  assert.equal(new Set(knobNames.map(knobEnvName)).size, knobNames.length);
});
