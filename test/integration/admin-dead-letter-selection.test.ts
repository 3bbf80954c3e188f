/**
 * Dead letters an operator works with, end to end on a real ferry, broker and
 * emulator: list them with filters, dry-run a replay of a selection (the emulator
 * receives nothing), then replay that selection (the emulator receives exactly the
 * selected commands, the others stay dead letters).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { timestampFromMs } from '@bufbuild/protobuf/wkt';
import { AdminService } from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { GrpcClient } from '../../src/admin/grpc-client.ts';
import { FIXTURE_PHONE, FIXTURE_SENDER } from '../fixtures/operations.ts';
import { produce, startEmulator, startFerry } from '../helpers/ferry.ts';

const ids = [7101, 7102, 7103, 7104, 7105];
const launcher = join(import.meta.dirname, '../../bin/ferryctl.mjs');

function sms(id: number) {
  return JSON.stringify({
    type: 'sms',
    id,
    phone: FIXTURE_PHONE,
    sms_message: `dead letter ${id}`,
    sms_signature: FIXTURE_SENDER,
  });
}

const headersOf = (id: number): Record<string, string> => ({
  'ferry-error': id === 7103 ? 'gateway unreachable (ECONNREFUSED)' : 'gateway request timed out',
  'ferry-delivery': id === 7105 ? 'in_doubt' : 'unsent',
  'ferry-source-offset': String(id),
  'trace-id': `trace-${id}`,
});

async function until(what: string, check: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('dead letters through the admin API of a running ferry', async () => {
  test('list with filters; a dry run sends nothing; a selection replays only the selected', async (t) => {
    const emulator = await startEmulator(t);
    const ferry = await startFerry(t, emulator);
    const before = Date.now() - 1000;
    await produce(
      t,
      ids.map((id) => ({
        topic: ferry.topics.dlq,
        key: String(id),
        value: sms(id),
        headers: headersOf(id),
      })),
    );
    const admin = new GrpcClient(AdminService, {
      address: `127.0.0.1:${ferry.daemon.admin.port}`,
    });
    t.after(() => admin.close());
    const call = { timeoutMs: 60_000 };

    const all = await admin.unary('listDeadLetters', {}, call);
    assert.deepEqual(all.deadLetters.map((d) => Number(d.key)).sort(), ids);
    assert.equal(all.limitReached, false);
    for (const letter of all.deadLetters) {
      assert.equal(letter.type, 'sms');
      assert.equal(letter.replayed, false);
      assert.equal(letter.value, undefined, 'the command only on request');
      assert.equal(letter.headers['trace-id'], `trace-${letter.key}`);
      assert.ok(letter.time && Number(letter.time.seconds) * 1000 >= before - 1000);
    }

    const inDoubt = await admin.unary('listDeadLetters', { inDoubt: true }, call);
    assert.deepEqual(
      inDoubt.deadLetters.map((d) => [d.key, d.delivery]),
      [['7105', 'in_doubt']],
    );
    const refused = await admin.unary(
      'listDeadLetters',
      { errorContains: 'ECONNREFUSED', includeValue: true },
      call,
    );
    assert.deepEqual(
      refused.deadLetters.map((d) => d.key),
      ['7103'],
    );
    assert.equal(refused.deadLetters[0]?.value, sms(7103));
    const none = await admin.unary('listDeadLetters', { until: timestampFromMs(before) }, call);
    assert.equal(none.deadLetters.length, 0);
    const since = await admin.unary('listDeadLetters', { since: timestampFromMs(before) }, call);
    assert.equal(since.deadLetters.length, ids.length);

    // The operator picks 7102 and 7104 by their positions.
    const picked = all.deadLetters.filter((d) => d.key === '7102' || d.key === '7104');
    const positions = picked.map((d) => ({
      partition: d.position?.partition ?? -1,
      offset: d.position?.offset ?? -1n,
    }));

    const dryRun = await admin.unary('replayDeadLetters', { positions, dryRun: true }, call);
    assert.equal(dryRun.replayed, 0);
    assert.deepEqual(dryRun.wouldReplay.map((d) => d.key).sort(), ['7102', '7104']);
    assert.deepEqual(
      dryRun.wouldReplay.map((d) => d.value).sort(),
      [sms(7102), sms(7104)],
      'a dry run shows the commands it would send',
    );
    await new Promise((resolve) => setTimeout(resolve, 2000));
    assert.equal(emulator.stats().operations, 0, 'a dry run sends nothing to the gateway');
    const afterDryRun = await admin.unary('listDeadLetters', {}, call);
    assert.ok(
      afterDryRun.deadLetters.every((d) => !d.replayed),
      'a dry run commits no progress',
    );

    const replay = await admin.unary('replayDeadLetters', { positions }, call);
    assert.equal(replay.replayed, 2);
    assert.equal(replay.wouldReplay.length, 0);
    await until('the replayed commands to reach the gateway', () => {
      const sends = emulator.stats().sendsById;
      return sends['7102'] === 1 && sends['7104'] === 1;
    });
    // A little longer, so a send of an unselected one would show.
    await new Promise((resolve) => setTimeout(resolve, 1500));
    assert.deepEqual(Object.keys(emulator.stats().sendsById).sort(), ['7102', '7104']);

    const listed = await admin.unary('listDeadLetters', {}, call);
    assert.deepEqual(
      listed.deadLetters
        .filter((d) => d.replayed)
        .map((d) => d.key)
        .sort(),
      ['7102', '7104'],
    );

    // The same through ferryctl, as an operator reads it: one line per dead letter.
    const { stdout } = await promisify(execFile)(
      process.execPath,
      [launcher, 'dlq', 'list', '--error-contains', 'timed out', '--not-in-doubt'],
      {
        env: { ...process.env, FERRY_ADMIN_ADDRESS: `127.0.0.1:${ferry.daemon.admin.port}` },
        timeout: 60_000,
      },
    );
    const lines = stdout.trim().split('\n');
    assert.equal(lines.at(-1), '3 dead letters (scanned 5)');
    const byKey = new Map(lines.slice(0, -1).map((line) => [/key=(\d+)/.exec(line)?.[1], line]));
    assert.deepEqual([...byKey.keys()].sort(), ['7101', '7102', '7104']);
    assert.match(
      byKey.get('7102') ?? '',
      /\tsms\tkey=7102\tunsent\tgateway request timed out\t\[replayed\]$/,
    );
    assert.doesNotMatch(byKey.get('7101') ?? '', /replayed/);
  });
});
