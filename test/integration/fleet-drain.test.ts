/**
 * DrainConsumption against a real ferry (in-process daemon, its gRPC admin API, the
 * control topic on the broker): commands already read are sent and committed, nothing
 * new is fetched, the replica says `drained` and stays so until ResumeConsumption.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import {
  AdminService,
  DesiredConsumption,
  PauseReason,
} from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { GrpcClient } from '../../src/admin/grpc-client.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { command, produce, readRecords, startEmulator, startFerry } from '../helpers/ferry.ts';
import { eventually } from '../helpers/fleet.ts';

const run = promisify(execFile);
const launcher = join(import.meta.dirname, '../../bin/ferryctl.mjs');

test('a drain finishes what was read, takes nothing new, and holds until resumed', async (t) => {
  const emulator = await startEmulator(t, { knobs: { latencyMs: 250 } });
  // Small envelopes, one at a time, small fetches: work stays in flight for seconds.
  const ferry = await startFerry(t, emulator, {
    FERRY_BATCH_MAX_OPS: '5',
    FERRY_CONCURRENCY: '1',
    FERRY_KAFKA_MAX_BYTES_PER_PARTITION: '4096',
    // Fetching does not wait for the batches before it: this bounds how far ahead it reads.
    FERRY_MAX_COMMANDS_IN_FLIGHT: '30',
  });
  const admin = new GrpcClient(AdminService, { address: `127.0.0.1:${ferry.daemon.admin.port}` });
  t.after(() => admin.close());

  const ids = Array.from({ length: 200 }, (_, i) => 7_000 + i);
  for (let i = 0; i < ids.length; i += 20) {
    await produce(
      t,
      ids.slice(i, i + 20).map((id) => command(ferry.topics.commands, smsOperation(id))),
    );
  }
  await eventually('the first envelope sent', async () =>
    emulator.stats().requests > 0 ? true : undefined,
  );

  // Through ferryctl, as an operator would.
  const address = `127.0.0.1:${ferry.daemon.admin.port}`;
  const printed = await run(process.execPath, [
    launcher,
    'drain',
    '--address',
    address,
    '--reason',
    'gateway maintenance',
  ]);
  assert.match(printed.stdout, /^fleet: draining \(version 1, by .+: gateway maintenance\)$/m);
  const draining = await admin.unary('getPipelineState', {});
  assert.equal(draining.fleet?.desired?.desired, DesiredConsumption.DRAINING);
  assert.equal(draining.fleet?.desired?.reason, 'gateway maintenance');
  assert.deepEqual(draining.state?.pauseReasons, [PauseReason.DRAINING]);

  const drained = await eventually(
    'drained',
    async () => {
      const { state } = await admin.unary('getPipelineState', {});
      return state?.phase === 'drained' ? state : undefined;
    },
    60_000,
  );
  assert.equal(drained.commandsInFlight, 0);
  assert.equal(drained.envelopesInFlight, 0);
  const sent = emulator.stats().operations;
  assert.ok(sent > 0 && sent < ids.length, `stopped part way (${sent} of ${ids.length} sent)`);
  // Everything read was sent and committed: one result for each send, nothing held.
  const results = await readRecords(t, ferry.topics.results, sent, { settleMs: 1_500 });
  assert.equal(results.length, sent);
  assert.equal(emulator.stats().operations, sent, 'nothing new was fetched and sent');
  await sleep(1_000);
  assert.equal(emulator.stats().operations, sent, 'it stays drained');

  const resumed = await admin.unary('resumeConsumption', {});
  assert.equal(resumed.state?.phase, 'running');
  const all = await readRecords(t, ferry.topics.results, ids.length, {
    timeoutMs: 60_000,
    settleMs: 1_000,
  });
  assert.deepEqual(all.map((r) => r.key).sort(), ids.map(String).sort());
  assert.equal(emulator.stats().duplicates.length, 0);
});
