import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { ReadBack } from './chaos-kafka.ts';
import type { PlannedRecord } from './command-mix.ts';
import { type VerifyInput, verifyRun } from './verify-run.ts';

const planned = (key: string, extra: Partial<PlannedRecord> = {}): PlannedRecord => ({
  key,
  value: Buffer.from('{}'),
  label: 'sms',
  expectDeadLetter: false,
  reconcilableId: key,
  ...extra,
});
const result = (key: string, value: Record<string, unknown>): ReadBack => ({
  key,
  value: Buffer.from(JSON.stringify(value)),
  headers: {},
});

function input(overrides: Partial<VerifyInput>): VerifyInput {
  const plan = [
    planned('1'),
    planned('2'),
    planned('fuzz-0', { expectDeadLetter: true, label: 'random bytes' }),
  ];
  delete (plan[2] as { reconcilableId?: string }).reconcilableId;
  return {
    plan,
    commandKeys: ['1', '2', 'fuzz-0'],
    results: [
      result('1', { success: true, stage: 'upstream' }),
      result('2', { success: true, stage: 'upstream', reconciled: true }),
      result('fuzz-0', { success: false, stage: 'validation' }),
    ],
    deadLetters: [{ key: 'fuzz-0', value: Buffer.from([0xff]), headers: {} }],
    sendsById: { '1': 1, '2': 1 },
    emulatorFaults: {},
    emulatorRequests: 2,
    drainMs: 100,
    drainMsAfterLastRecord: 50,
    unexpectedExits: [],
    brokerDownWindows: [],
    replicaStarts: 2,
    faults: [],
    seed: 1,
    ...overrides,
  };
}

test('a clean run has no violation and counts reconciled results', () => {
  const { violations, figures } = verifyRun(input({}));
  assert.deepEqual(violations, []);
  assert.equal(figures.reconciled, 1);
  assert.equal(figures.deadLetters, 1);
});

test('a second result, a missing one, a second send and a success never sent are each a violation', () => {
  const base = input({});
  const { violations } = verifyRun({
    ...base,
    results: [...base.results.filter((r) => r.key !== 'fuzz-0'), result('1', { success: true })],
    sendsById: { '1': 2 },
  });
  assert.equal(violations.length, 4, violations.join('\n'));
  assert.match(violations.join('\n'), /more than one result: 1/);
  assert.match(violations.join('\n'), /no result: fuzz-0/);
  assert.match(violations.join('\n'), /more than once: 1×2/);
  assert.match(violations.join('\n'), /never accepted: 2/);
});

test('a replica exiting on its own away from a broker outage is a violation; during one it is not', () => {
  const exit = { replica: 'replica-1', code: 70, atMs: 10_000 };
  assert.equal(verifyRun(input({ unexpectedExits: [exit] })).violations.length, 1);
  const during = input({
    unexpectedExits: [exit],
    brokerDownWindows: [{ fromMs: 9_000, toMs: 9_500 }],
  });
  assert.deepEqual(verifyRun(during).violations, []);
});

test('an unreadable record without its dead letter is a violation', () => {
  const { violations } = verifyRun(input({ deadLetters: [] }));
  assert.equal(violations.length, 2, violations.join('\n'));
  assert.match(
    violations[0] ?? '',
    /without exactly one dead letter per copy: fuzz-0 \(random bytes\)/,
  );
});

test('a command refused by the contract that reached the gateway anyway is a violation', () => {
  const base = input({});
  const { violations } = verifyRun({
    ...base,
    results: [
      base.results[0] as ReadBack,
      result('2', { success: false, stage: 'validation' }),
      base.results[2] as ReadBack,
    ],
  });
  assert.deepEqual(violations, ['1 commands refused by the contract reached the gateway: 2']);
});

test("with duplicate suppression off, a record the run's producer wrote twice is two commands: a result, a send and a dead letter each", () => {
  const base = input({});
  const doubled = {
    ...base,
    dedupe: false,
    commandKeys: ['1', '1', '2', 'fuzz-0', 'fuzz-0'],
    results: [
      ...base.results,
      result('1', { success: true }),
      result('fuzz-0', { stage: 'validation' }),
    ],
    deadLetters: [...base.deadLetters, ...base.deadLetters],
    sendsById: { '1': 2, '2': 1 },
  };
  const { violations, figures } = verifyRun(doubled);
  assert.deepEqual(violations, []);
  assert.equal(figures.commandsWrittenTwice, 2);
  assert.equal(figures.recordsInCommandsTopic, 5);
  // Still one result, one send and one dead letter per copy, no more, no fewer.
  const tooMany = verifyRun({
    ...doubled,
    results: [...doubled.results, result('1', { success: true })],
    sendsById: { '1': 3, '2': 1 },
  });
  assert.match(tooMany.violations.join('\n'), /more than one result: 1/);
  assert.match(tooMany.violations.join('\n'), /more than once: 1×3/);
  const tooFew = verifyRun({
    ...doubled,
    results: doubled.results.slice(0, -2),
    deadLetters: base.deadLetters,
  });
  assert.match(tooFew.violations.join('\n'), /2 commands have no result: 1, fuzz-0/);
  assert.match(tooFew.violations.join('\n'), /without exactly one dead letter per copy: fuzz-0/);
});

test('a planned record missing from the commands topic makes the run invalid', () => {
  const { violations } = verifyRun(input({ commandKeys: ['1', 'fuzz-0'] }));
  assert.match(
    violations.join('\n'),
    /lacks 1 planned records \(the run's producer lost them\): 2/,
  );
});

test('with duplicate suppression on, a copy is answered duplicate and its id reaches the gateway once', () => {
  const base = input({});
  const copied = {
    ...base,
    commandKeys: ['1', '1', '2', 'fuzz-0'],
    results: [
      ...base.results,
      result('1', { success: false, stage: 'validation', code: 'duplicate' }),
    ],
    sendsById: { '1': 1, '2': 1 },
  };
  const { violations, figures } = verifyRun(copied);
  assert.deepEqual(violations, []);
  assert.equal(figures.commandsWrittenTwice, 1);
  const sentAgain = verifyRun({ ...copied, sendsById: { '1': 2, '2': 1 } });
  assert.match(sentAgain.violations.join('\n'), /more than once: 1×2/);
});

test('with final status tracking, a message sent needs exactly one final event, none given up and none for a message never sent', () => {
  const base = input({});
  const sent = (id: string, msgId: string) =>
    result(id, { id: Number(id), type: 'sms', success: true, stage: 'upstream', msg_id: msgId });
  const final = (id: string, msgId: string, source = 'poll') =>
    result(id, { id, msg_id: msgId, type: 'sms', status: 'DELIVERED', source });
  const tracked = {
    ...base,
    results: [sent('1', 'm1'), sent('2', 'm2'), base.results[2] as ReadBack],
    finalStatuses: [final('1', 'm1'), final('2', 'm2')],
  };
  const clean = verifyRun(tracked);
  assert.deepEqual(clean.violations, []);
  assert.equal(clean.figures.finalStatuses?.messagesSent, 2);
  assert.deepEqual(clean.figures.finalStatuses?.bySource, { poll: 2 });
  // Off: nothing is checked.
  assert.equal(verifyRun(base).figures.finalStatuses, null);

  const twiceAndMissing = verifyRun({
    ...tracked,
    finalStatuses: [final('1', 'm1'), final('1', 'm1', 'callback')],
  });
  assert.equal(twiceAndMissing.violations.length, 2, twiceAndMissing.violations.join('\n'));
  assert.match(
    twiceAndMissing.violations.join('\n'),
    /1 messages sent have no final status event: 2/,
  );
  assert.match(
    twiceAndMissing.violations.join('\n'),
    /1 messages sent have more than one final status event: 1×2/,
  );
  assert.equal(twiceAndMissing.figures.finalStatuses?.missing, 1);
  assert.equal(twiceAndMissing.figures.finalStatuses?.moreThanOne, 1);

  const wrong = verifyRun({
    ...tracked,
    // Command 2 was a duplicate: its first was the message, it is not one of its own.
    results: [
      sent('1', 'm1'),
      result('2', { id: 2, type: 'sms', success: false, stage: 'validation', code: 'duplicate' }),
      base.results[2] as ReadBack,
    ],
    finalStatuses: [final('1', 'm1', 'give_up'), final('2', 'm2')],
  });
  assert.match(wrong.violations.join('\n'), /1 final status events given up: 1/);
  assert.match(
    wrong.violations.join('\n'),
    /1 final status events for messages never sent successfully: 2/,
  );
});

test('late copies: each must be answered duplicate with its first msg_id, and its id sent once', () => {
  const first = { success: true, stage: 'upstream', msg_id: '77' };
  const copy = {
    success: false,
    stage: 'validation',
    code: 'duplicate',
    msg_id: '77',
    duplicate_of: { success: true },
  };
  const good = verifyRun(
    input({
      commandKeys: ['1', '1', '2', 'fuzz-0'],
      results: [
        result('1', first),
        result('1', copy),
        result('2', { success: true, stage: 'upstream', reconciled: true }),
        result('fuzz-0', { success: false, stage: 'validation' }),
      ],
      lateCopies: { keys: ['1'], secondsAfterFirst: 120 },
    }),
  );
  assert.deepEqual(good.violations, []);
  assert.deepEqual(good.figures.lateCopies, {
    written: 1,
    secondsAfterFirst: 120,
    answeredDuplicate: 1,
  });

  // The copy sent again: two non-duplicate results and two sends.
  const sentAgain = verifyRun(
    input({
      commandKeys: ['1', '1', '2', 'fuzz-0'],
      results: [
        result('1', first),
        result('1', { ...first, msg_id: '78' }),
        result('2', { success: true, stage: 'upstream', reconciled: true }),
        result('fuzz-0', { success: false, stage: 'validation' }),
      ],
      sendsById: { '1': 2, '2': 1 },
      lateCopies: { keys: ['1'], secondsAfterFirst: 120 },
    }),
  );
  assert.ok(sentAgain.violations.some((v) => v.includes('late copies not answered duplicate')));

  // Answered duplicate but with another outcome than its first's.
  const otherOutcome = verifyRun(
    input({
      commandKeys: ['1', '1', '2', 'fuzz-0'],
      results: [
        result('1', first),
        result('1', { ...copy, msg_id: '99' }),
        result('2', { success: true, stage: 'upstream', reconciled: true }),
        result('fuzz-0', { success: false, stage: 'validation' }),
      ],
      lateCopies: { keys: ['1'], secondsAfterFirst: 120 },
    }),
  );
  assert.equal(otherOutcome.figures.lateCopies?.answeredDuplicate, 0);
  assert.equal(otherOutcome.violations.length, 1);
});
