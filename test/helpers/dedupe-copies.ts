/**
 * Copies of commands written with kcat (librdkafka), and the check every duplicate
 * suppression test ends with: each id reached the gateway once, each copy got exactly
 * one result, copies answered `duplicate` with the first's outcome.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import type { Emulator } from '../../src/emulator/index.ts';
import { findTool } from '../deploy/external-tools.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { testBrokers } from './kafka.ts';
import { kcatReadAll } from './kcat.ts';

const execFileAsync = promisify(execFile);

/** Writes one sms command per id with kcat, keyed by String(id) (kcat hashes the key). */
export async function kcatWrite(
  topic: string,
  ids: readonly number[],
  brokers: readonly string[] = testBrokers(),
): Promise<void> {
  const child = execFileAsync(
    findTool('kcat'),
    ['-P', '-b', brokers.join(','), '-t', topic, '-K', '\t', '-X', 'acks=all'],
    { timeout: 30_000 },
  );
  child.child.stdin?.end(ids.map((id) => `${id}\t${JSON.stringify(smsOperation(id))}\n`).join(''));
  await child;
}

export interface CommandRecord {
  readonly partition: number;
  readonly offset: number;
  readonly key: string;
}

/** Where kcat's copies landed: every record of the commands topic, read with kcat. */
export async function kcatCommands(
  topic: string,
  brokers: readonly string[] = testBrokers(),
): Promise<CommandRecord[]> {
  const { stdout } = await execFileAsync(
    findTool('kcat'),
    [
      ...['-C', '-b', brokers.join(','), '-t', topic, '-o', 'beginning', '-e', '-q'],
      ...['-f', '%p\\t%o\\t%k\\n'],
    ],
    { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const [partition, offset, key] = line.split('\t');
      return { partition: Number(partition), offset: Number(offset), key: key ?? '' };
    });
}

export interface ReadResult {
  readonly partition: number;
  readonly key: string;
  readonly value: Record<string, unknown>;
}

/** Every result committed so far, read with kcat at read_committed, in offset order per partition. */
export async function kcatResults(
  topic: string,
  brokers: readonly string[] = testBrokers(),
): Promise<ReadResult[]> {
  return (await kcatReadAll(topic, brokers)).map((record) => ({
    partition: record.partition,
    key: record.key,
    value: JSON.parse(record.value.toString('utf8')) as Record<string, unknown>,
  }));
}

/** Polls the results until `count` are committed; fails after `timeoutMs`. */
export async function untilResults(
  topic: string,
  count: number,
  timeoutMs = 30_000,
  brokers: readonly string[] = testBrokers(),
): Promise<ReadResult[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const results = await kcatResults(topic, brokers);
    if (results.length >= count) return results;
    if (Date.now() > deadline) throw new Error(`${results.length} of ${count} results`);
    await sleep(200);
  }
}

export interface CopiesCheck {
  readonly emulator: Emulator;
  readonly commands: readonly CommandRecord[];
  readonly results: readonly ReadResult[];
  /** Every id written, each one or more times. */
  readonly ids: readonly number[];
  /**
   * Ids whose copies were answered while the first was still on its way: their
   * `completed_at` is when the copy saw the first settle, not the first's own stamp.
   */
  readonly answeredInFlight?: ReadonlySet<number>;
  /**
   * Of those, ids whose first an outage held, and how far apart (ms) a copy's `completed_at`
   * and the first's own may then be: the first settles when Kafka is back, so as far apart
   * as the outage and the recovery after it. Others: 5,000 ms.
   */
  readonly heldByOutage?: { readonly ids: ReadonlySet<number>; readonly apartMs: number };
  /** Ids whose first was found at the gateway by a lookup rather than sent again. */
  readonly reconciled?: ReadonlySet<number>;
}

/** Each id reached the gateway once; each copy has one result, `duplicate` of the first. */
export function assertOneSendPerId(check: CopiesCheck): void {
  const { emulator, commands, results, ids } = check;
  assert.deepEqual(
    emulator.stats().sendsById,
    Object.fromEntries(ids.map((id) => [String(id), 1])),
    'every id reached the gateway exactly once',
  );
  assert.equal(results.length, commands.length, 'one result per command record, none more');
  for (const id of ids) {
    const copies = commands.filter((c) => c.key === String(id));
    const [firstCommand] = copies;
    assert.ok(firstCommand, `commands of ${id}`);
    assert.ok(
      copies.every((c) => c.partition === firstCommand.partition),
      `the copies of ${id} are on one partition`,
    );
    // Results of a partition are in the order of its commands: the first copy's comes first.
    const [first, ...others] = results.filter((r) => r.key === String(id)).map((r) => r.value);
    assert.equal(1 + others.length, copies.length, `one result per copy of ${id}`);
    assert.ok(
      first?.success === true && first.code === undefined,
      `${id}: ${JSON.stringify(first)}`,
    );
    assert.ok(first.msg_id !== undefined, `the first of ${id} has its msg_id`);
    if (check.reconciled?.has(id)) {
      assert.equal(first.reconciled, true, `${id} found at the gateway, not sent`);
    }
    for (const copy of others) {
      const of = (copy.duplicate_of ?? {}) as Record<string, unknown>;
      assert.deepEqual(
        {
          success: copy.success,
          stage: copy.stage,
          code: copy.code,
          msg_id: copy.msg_id,
          duplicate_of: { partition: of.partition, offset: of.offset, success: of.success },
        },
        {
          success: false,
          stage: 'validation',
          code: 'duplicate',
          msg_id: first.msg_id,
          duplicate_of: {
            partition: firstCommand.partition,
            offset: String(firstCommand.offset),
            success: true,
          },
        },
        `a copy of ${id}: ${JSON.stringify(copy)}`,
      );
      const apartMs = Date.parse(String(of.completed_at)) - Date.parse(String(first.completed_at));
      if (check.answeredInFlight?.has(id)) {
        const held = check.heldByOutage;
        const boundMs = held?.ids.has(id) ? held.apartMs : 5_000;
        assert.ok(Math.abs(apartMs) < boundMs, `a copy of ${id}: ${JSON.stringify(copy)}`);
      } else {
        assert.equal(of.completed_at, first.completed_at, `a copy of ${id}`);
      }
    }
  }
}
