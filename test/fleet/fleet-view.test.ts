import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  ControlRecordError,
  formatRecord,
  INITIAL_DESIRED,
  parseControlRecord,
  type ReplicaRecord,
} from '../../src/fleet/control-records.ts';
import { FleetView } from '../../src/fleet/fleet-view.ts';
import type { PipelineState } from '../../src/pipeline/pipeline-control.ts';

const state: PipelineState = {
  running: true,
  paused: false,
  pauseReasons: [],
  partitions: [{ topic: 'c', partition: 0, lag: 3 }],
  envelopesInFlight: 0,
  envelopesQueued: 0,
  commandsInFlight: 0,
  desired: 'running',
  phase: 'running',
};

const replica = (id: string, seenAtMs: number): ReplicaRecord => ({
  id,
  version: '0.1.0',
  seenAtMs,
  ttlMs: 10_000,
  appliedVersion: 0,
  appliedAtMs: seenAtMs,
  state,
});

/**
 * Folds `key → value` records in order, as the control topic hands them over, each
 * received at the time given (the reader's clock; 0 unless given).
 */
function fold(records: readonly (readonly [string, string | null, number?])[]): FleetView {
  const view = new FleetView();
  records.forEach(([key, value, receivedAtMs = 0], offset) => {
    const entry = parseControlRecord(key, value);
    if (entry) view.apply(entry, offset, receivedAtMs);
  });
  return view;
}

test('pipeline records: the latest in offset order is the desired state; a tombstone is the initial one', () => {
  const paused = { desired: 'paused', version: 1, reason: 'r', by: 'a', at: 't' } as const;
  const running = { desired: 'running', version: 2, reason: '', by: 'b', at: 't' } as const;
  assert.deepEqual(fold([]).desired, INITIAL_DESIRED);
  assert.deepEqual(fold([['pipeline', formatRecord(paused)]]).desired, paused);
  assert.deepEqual(
    fold([
      ['pipeline', formatRecord(paused)],
      ['pipeline', formatRecord(running)],
    ]).desired,
    running,
  );
  assert.deepEqual(
    fold([
      ['pipeline', formatRecord(paused)],
      ['pipeline', null],
    ]).desired,
    INITIAL_DESIRED,
  );
});

test('the record format: versioned JSON, refused when the version or a field is wrong', () => {
  const value = formatRecord({ desired: 'draining', version: 3, reason: '', by: 'a', at: 't' });
  assert.equal(JSON.parse(value).v, 1);
  assert.throws(
    () => parseControlRecord('pipeline', value.replace('"v":1', '"v":2')),
    ControlRecordError,
  );
  assert.throws(
    () => parseControlRecord('pipeline', value.replace('draining', 'stopped')),
    /desired: must be one of running, paused, draining/,
  );
  assert.throws(() => parseControlRecord('pipeline', '[1]'), ControlRecordError);
  assert.equal(parseControlRecord('something-else', '{}'), undefined);
});

test('replicas: live while younger than their time to live; a tombstone removes one at once', () => {
  const view = fold([
    ['replica/a-1', formatRecord(replica('a-1', 1_000)), 1_000],
    ['replica/b-1', formatRecord(replica('b-1', 5_000)), 5_000],
    ['replica/c-1', formatRecord(replica('c-1', 5_000)), 5_000],
    ['replica/c-1', null, 5_000],
  ]);
  assert.deepEqual(
    view.liveReplicas(10_000).map((r) => r.id),
    ['a-1', 'b-1'],
  );
  assert.deepEqual(
    view.liveReplicas(12_000).map((r) => r.id),
    ['b-1'],
    'a-1 was last seen 11 s ago',
  );
  assert.deepEqual(view.deadReplicas(12_000, 0), ['a-1']);
  assert.deepEqual(view.deadReplicas(12_000, 5_000), [], 'collected only after the grace');
});

test('replay lock: of two claims written at once, the first in offset order holds; the second does not displace it', () => {
  const claim = (claimId: string, owner: string, claimOffset?: number) =>
    formatRecord({
      claimId,
      owner,
      expiresAtMs: 100_000,
      ...(claimOffset === undefined ? {} : { claimOffset }),
    });
  const view = fold([
    ['replay-lock/x', claim('x', 'a')],
    ['replay-lock/y', claim('y', 'b')],
  ]);
  assert.equal(view.lockHolder(50_000)?.claimId, 'x');
  assert.equal(view.lockHolder(50_000)?.claimOffset, 0);
  // A renewal written later keeps the claim's first offset.
  const renewed = fold([
    ['replay-lock/x', claim('x', 'a')],
    ['replay-lock/y', claim('y', 'b')],
    ['replay-lock/x', claim('x', 'a', 0)],
  ]);
  assert.equal(renewed.lockHolder(50_000)?.claimId, 'x');
});

test('replay lock: a released or lapsed claim holds nothing; the next claim in order takes over', () => {
  const claim = (claimId: string, expiresAtMs: number) =>
    formatRecord({ claimId, owner: claimId, expiresAtMs });
  const view = fold([
    ['replay-lock/x', claim('x', 100_000)],
    ['replay-lock/x', null],
    ['replay-lock/y', claim('y', 20_000)],
    ['replay-lock/z', claim('z', 100_000)],
  ]);
  assert.equal(view.lockHolder(10_000)?.claimId, 'y');
  assert.equal(view.lockHolder(30_000)?.claimId, 'z', 'y lapsed');
  assert.deepEqual(view.lapsedClaims(30_000, 5_000), ['y']);
  assert.equal(fold([]).lockHolder(0), undefined);
});

test('expiry is timed on the reader’s clock alone: writers an hour ahead or behind expire like the others', () => {
  const hour = 3_600_000;
  const view = fold([
    ['replica/ahead', formatRecord(replica('ahead', 1_000 + hour)), 1_000],
    ['replica/behind', formatRecord(replica('behind', 1_000 - hour)), 1_000],
    [
      'replay-lock/x',
      formatRecord({ claimId: 'x', owner: 'behind', expiresAtMs: 31_000 - hour, ttlMs: 30_000 }),
      1_000,
    ],
  ]);
  assert.deepEqual(
    view.liveReplicas(10_000).map((r) => r.id),
    ['ahead', 'behind'],
    'both received 9 s ago, within their 10 s',
  );
  assert.deepEqual(view.liveReplicas(12_000), [], 'both received 11 s ago');
  assert.deepEqual(view.deadReplicas(12_000, 0).sort(), ['ahead', 'behind']);
  assert.equal(view.lockHolder(30_000)?.claimId, 'x', 'held 30 s from its receipt');
  assert.equal(view.lockHolder(30_000)?.lapsesAtMs, 31_000);
  assert.equal(view.lockHolder(32_000), undefined, 'lapsed');
  assert.deepEqual(view.lapsedClaims(32_000, 0), ['x']);
});

test('a claim without ttlMs (an older ferry) lapses at its writer’s expiresAtMs', () => {
  const view = fold([
    ['replay-lock/x', formatRecord({ claimId: 'x', owner: 'a', expiresAtMs: 20_000 }), 1_000],
  ]);
  assert.equal(view.lockHolder(19_000)?.claimId, 'x');
  assert.equal(view.lockHolder(21_000), undefined);
});

test('replay progress: the latest record, removed by a tombstone', () => {
  const progress = {
    owner: 'a',
    claimId: 'x',
    state: 'finished',
    replayed: 5,
    scanned: 6,
    skipped: 1,
    alreadyReplayed: 0,
    startedAtMs: 1,
    updatedAtMs: 2,
  } as const;
  assert.deepEqual(fold([['replay-progress', formatRecord(progress)]]).progress, progress);
  assert.equal(
    fold([
      ['replay-progress', formatRecord(progress)],
      ['replay-progress', null],
    ]).progress,
    undefined,
  );
});
