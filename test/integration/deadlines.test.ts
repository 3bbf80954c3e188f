/**
 * Deadlines end to end: commands written with kcat (librdkafka), some with a
 * `ferry-expires-at` header, some given one by FERRY_EXPIRE_AFTER_MS, held by a paused
 * fleet or a backlog until their deadline passed. Those are answered `expired` and the
 * gateway never sees them; the others are sent once.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { findTool } from '../deploy/external-tools.ts';
import { smsOperation, validOperations } from '../fixtures/operations.ts';
import { kcatResults, untilResults } from '../helpers/dedupe-copies.ts';
import { startEmulator, startFerry } from '../helpers/ferry.ts';
import { testBrokers } from '../helpers/kafka.ts';

const execFileAsync = promisify(execFile);

interface Written {
  readonly id: number;
  readonly value: Record<string, unknown>;
  readonly expiresAt?: string;
}

/** Writes each command with kcat, keyed by its id, with its `ferry-expires-at` when it has one. */
async function kcatWrite(topic: string, commands: readonly Written[]): Promise<void> {
  // kcat sets headers per invocation (-H), so commands with different headers go one by one.
  for (const command of commands) {
    const child = execFileAsync(
      findTool('kcat'),
      [
        ...['-P', '-b', testBrokers().join(','), '-t', topic, '-k', String(command.id)],
        ...(command.expiresAt ? ['-H', `ferry-expires-at=${command.expiresAt}`] : []),
      ],
      { timeout: 30_000 },
    );
    child.child.stdin?.end(JSON.stringify(command.value));
    await child;
  }
}

function telegram(id: number): Record<string, unknown> {
  return { ...validOperations.telegram, id };
}

function byId(results: Awaited<ReturnType<typeof kcatResults>>) {
  return new Map(results.map((r) => [Number(r.key), r.value]));
}

test('commands whose deadline passes while the fleet is paused are answered expired, never sent; the others go once', {
  timeout: 90_000,
}, async (t) => {
  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator, { FERRY_EXPIRE_AFTER_MS: 'telegram=2000' });
  ferry.daemon.pipeline.pause('operator');
  const soon = new Date(Date.now() + 2_000).toISOString();
  const later = new Date(Date.now() + 120_000).toISOString().replace('Z', '+00:00');
  const commands: Written[] = [
    ...[1, 2, 3].map((id) => ({ id, value: smsOperation(id), expiresAt: soon })),
    ...[4, 5, 6].map((id) => ({ id, value: smsOperation(id), expiresAt: later })),
    // Given a deadline by FERRY_EXPIRE_AFTER_MS, counted from kcat's record timestamp.
    ...[7, 8, 9].map((id) => ({ id, value: telegram(id) })),
    // No header and no default for sms: no deadline.
    ...[10, 11].map((id) => ({ id, value: smsOperation(id) })),
    // A header that is no date-time.
    { id: 12, value: smsOperation(12), expiresAt: 'in five minutes' },
    // A telegram with its own header: the header wins over the default.
    { id: 13, value: telegram(13), expiresAt: later },
  ];
  await kcatWrite(ferry.topics.commands, commands);
  await sleep(3_000);
  assert.equal(emulator.stats().requests, 0, 'nothing sent while paused');
  ferry.daemon.pipeline.resume();
  const results = byId(await untilResults(ferry.topics.results, commands.length));
  await sleep(500);
  assert.equal((await kcatResults(ferry.topics.results)).length, commands.length, 'one each');

  for (const id of [1, 2, 3, 7, 8, 9]) {
    const result = results.get(id);
    assert.equal(result?.code, 'expired', `${id}: ${JSON.stringify(result)}`);
    assert.equal(result.success, false);
    assert.equal(result.stage, 'validation');
    assert.equal(result.attempts, 0);
    assert.match(String(result.error), /deadline .* passed before it could be sent/);
  }
  assert.equal(results.get(1)?.expires_at, soon);
  for (const id of [4, 5, 6, 10, 11, 13]) {
    const result = results.get(id);
    assert.equal(result?.success, true, `${id}: ${JSON.stringify(result)}`);
  }
  assert.equal(results.get(4)?.expires_at, new Date(Date.parse(later)).toISOString());
  assert.equal(results.get(10)?.expires_at, undefined, 'no deadline, none reported');
  assert.equal(results.get(12)?.code, 'validation');
  assert.match(String(results.get(12)?.error), /ferry-expires-at: must be an RFC 3339 date-time/);
  assert.deepEqual(
    emulator.stats().sendsById,
    { '4': 1, '5': 1, '6': 1, '10': 1, '11': 1, '13': 1 },
    'the gateway saw only the commands within their deadline, once each',
  );
  const expired = await ferry.metrics.commandsExpired.get();
  assert.deepEqual(Object.fromEntries(expired.values.map((v) => [v.labels.type, v.value])), {
    sms: 3,
    telegram: 3,
  });
});

test('commands at the back of a backlog whose deadline passes before their turn are answered expired', {
  timeout: 90_000,
}, async (t) => {
  // One envelope of one command at a time, each answered after 400 ms: the twelfth
  // command's turn comes about 4.4 s after the first's.
  const emulator = await startEmulator(t, { knobs: { latencyMs: 400 } });
  const ferry = await startFerry(t, emulator, {
    FERRY_CONCURRENCY: '1',
    FERRY_BATCH_MAX_OPS: '1',
    FERRY_TOPIC_PARTITIONS: '1',
  });
  const deadline = new Date(Date.now() + 2_500).toISOString();
  const commands: Written[] = [
    ...Array.from({ length: 8 }, (_, i) => ({ id: 100 + i, value: smsOperation(100 + i) })),
    ...[200, 201, 202, 203].map((id) => ({ id, value: smsOperation(id), expiresAt: deadline })),
  ];
  await kcatWrite(ferry.topics.commands, commands);
  const results = byId(await untilResults(ferry.topics.results, commands.length, 60_000));
  const sends = emulator.stats().sendsById;
  for (let i = 0; i < 8; i++) assert.equal(results.get(100 + i)?.success, true);
  const late = [200, 201, 202, 203].filter((id) => results.get(id)?.code === 'expired');
  assert.ok(
    late.length > 0,
    `some of the commands behind the backlog expired: ${JSON.stringify([...results])}`,
  );
  for (const id of [200, 201, 202, 203]) {
    const sent = results.get(id)?.success === true;
    assert.equal(sends[String(id)] ?? 0, sent ? 1 : 0, `${id}: sent once if on time, else never`);
  }
});
