/**
 * The oracle's rules, each shown to fail on the run that breaks it: a simulator whose
 * oracle cannot fail proves nothing.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkRun, type OracleInput } from './oracle.ts';

const results = 'results';

function result(key: string, fields: Record<string, unknown>) {
  return { topic: results, key, value: JSON.stringify(fields), transactionalId: 't' };
}

function run(overrides: Partial<OracleInput>): OracleInput {
  return {
    commands: [
      { key: 'c1', id: 1001, valid: true },
      { key: 'c2', id: 1002, valid: false },
    ],
    visible: [
      result('c1', { success: true, stage: 'upstream' }),
      result('c2', { success: false, stage: 'validation', error: 'bad' }),
    ],
    resultsTopic: results,
    sendsById: { '1001': 1 },
    unfinished: [],
    ...overrides,
  };
}

test('a run that keeps every rule has no violations', () => {
  assert.deepEqual(checkRun(run({})), []);
});

test('a command with two results, or none, is a violation', () => {
  const two = run({
    visible: [...run({}).visible, result('c1', { success: true, stage: 'upstream' })],
  });
  assert.deepEqual(checkRun(two), ['command c1: 2 results for 1 record(s)']);
  const none = run({ visible: run({}).visible.slice(1) });
  assert.match(checkRun(none).join('\n'), /command c1: 0 results for 1 record/);
});

test('an id carried out twice, or an invalid command sent, is a violation', () => {
  assert.deepEqual(checkRun(run({ sendsById: { '1001': 2 } })), [
    'command c1: id 1001 carried out 2 times',
  ]);
  assert.deepEqual(checkRun(run({ sendsById: { '1001': 1, '1002': 1 } })), [
    'command c2: invalid, yet sent',
  ]);
});

test('success without a send the gateway carried out is a violation', () => {
  assert.deepEqual(checkRun(run({ sendsById: {} })), [
    'command c1: success without a send the gateway carried out',
  ]);
});

test('a valid command the gateway refused is a violation: the run tested no sends', () => {
  const refused = run({
    visible: [
      result('c1', { success: false, stage: 'upstream', error: 'Error in Alpha-name' }),
      run({}).visible[1] as ReturnType<typeof result>,
    ],
    sendsById: {},
  });
  assert.deepEqual(checkRun(refused), [
    'command c1: valid, yet upstream refused it: Error in Alpha-name',
  ]);
  // A transport failure after the retry budget is an outcome ferry may publish.
  const gaveUp = run({
    visible: [
      result('c1', { success: false, stage: 'transport', error: 'gateway answered HTTP 503' }),
      run({}).visible[1] as ReturnType<typeof result>,
    ],
    sendsById: {},
  });
  assert.deepEqual(checkRun(gaveUp), []);
});

test('a result no command had, and a partition left unfinished, are violations', () => {
  const extra = run({ visible: [...run({}).visible, result('c9', { success: true })] });
  assert.deepEqual(checkRun(extra), ['a result for c9, which no command had']);
  assert.deepEqual(checkRun(run({ unfinished: ['commands-0: 3 of 5'] })), [
    'partition not finished: commands-0: 3 of 5',
  ]);
});

test('copies: one result per record; one send with dedupe on, one per copy with it off', () => {
  const copy = { key: 'c1', id: 1001, valid: true };
  const duplicate = result('c1', {
    success: false,
    stage: 'validation',
    code: 'duplicate',
    duplicate_of: { partition: 0, offset: '0', success: true, completed_at: 'x' },
  });
  const base = run({});
  const copied = run({
    commands: [...base.commands, copy],
    visible: [...base.visible, duplicate],
    dedupe: true,
  });
  assert.deepEqual(checkRun(copied), []);
  assert.deepEqual(checkRun({ ...copied, sendsById: { '1001': 2 } }), [
    'command c1: id 1001 carried out 2 times',
  ]);
  // A duplicate claiming a first that reached the gateway, when none did.
  assert.deepEqual(checkRun({ ...copied, sendsById: {} }), [
    'command c1: success without a send the gateway carried out',
    'command c1: success without a send the gateway carried out',
  ]);
  const sentTwice = run({
    commands: [...base.commands, copy],
    visible: [...base.visible, result('c1', { success: true, stage: 'upstream' })],
    sendsById: { '1001': 2 },
    dedupe: false,
  });
  assert.deepEqual(checkRun(sentTwice), []);
  assert.deepEqual(checkRun({ ...copied, dedupe: false }), [
    'command c1: duplicate with dedupe off',
  ]);
});

test('final status: a message sent without a final event, with two, or a final event never sent is a violation', () => {
  const finalEvent = (key: string, source = 'poll') => ({
    topic: 'final-status',
    key,
    value: JSON.stringify({ id: key, source }),
    transactionalId: 't',
  });
  const sent = [
    result('c1', { id: 1001, success: true, stage: 'upstream', msg_id: 'm1' }),
    result('c2', { success: false, stage: 'validation', error: 'bad' }),
  ];
  const tracked = (visible: OracleInput['visible']) =>
    run({ visible, finalTopic: 'final-status', dedupe: true });
  assert.deepEqual(checkRun(tracked([...sent, finalEvent('1001')])), []);
  assert.deepEqual(checkRun(tracked(sent)), ['id 1001: sent, but no final status event']);
  assert.deepEqual(checkRun(tracked([...sent, finalEvent('1001'), finalEvent('1001')])), [
    'id 1001: 2 final status events for 1 message(s)',
  ]);
  assert.deepEqual(checkRun(tracked([...sent, finalEvent('1001'), finalEvent('1002')])), [
    'id 1002: a final status event, but never sent',
  ]);
  assert.deepEqual(checkRun(tracked([...sent, finalEvent('1001', 'give_up')])), [
    'id 1001: final status given up',
  ]);
});
