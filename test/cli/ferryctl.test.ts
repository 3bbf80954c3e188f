import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, type TestContext, test } from 'node:test';
import { promisify } from 'node:util';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { createAdminHandlers } from '../../src/admin/admin-handlers.ts';
import { RpcError } from '../../src/admin/admin-status.ts';
import { AdminService } from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { implementService, serviceDefinition } from '../../src/admin/grpc-service.ts';
import { lagText, totalLagText } from '../../src/cli/ferryctl-pipeline.ts';
import {
  ADMIN_TOKEN,
  FIXTURE_VERSION,
  RecordingReplayer,
  startAdmin,
} from '../admin/admin-fixture.ts';

const run = promisify(execFile);
const launcher = join(import.meta.dirname, '../../bin/ferryctl.mjs');

interface Outcome {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs ferryctl as a child process on this Node (the server is in this process, so never sync). */
async function ferryctl(args: string[], env: Record<string, string> = {}): Promise<Outcome> {
  try {
    const { stdout, stderr } = await run(process.execPath, [launcher, ...args], {
      env: { ...process.env, FERRY_ADMIN_TOKEN: '', FERRY_ADMIN_ADDRESS: '', ...env },
      timeout: 30_000,
    });
    return { code: 0, stdout, stderr };
  } catch (error: unknown) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, stdout: failed.stdout ?? '', stderr: failed.stderr ?? '' };
  }
}

describe('ferryctl', async () => {
  test('--help prints the commands and exits 0', async () => {
    const outcome = await ferryctl(['--help']);
    assert.equal(outcome.code, 0);
    assert.match(outcome.stdout, /dlq replay/);
    assert.match(outcome.stdout, /send sms/);
  });

  test('an unknown command exits 2 with one line', async () => {
    const outcome = await ferryctl(['frobnicate']);
    assert.equal(outcome.code, 2);
    assert.equal(outcome.stderr.trim().split('\n').length, 1);
    assert.match(outcome.stderr, /unknown command "frobnicate"/);
  });

  test('balance, state and hlr print JSON for scripts', async (t) => {
    const { address, pipeline } = await startAdmin(t);
    const env = { FERRY_ADMIN_ADDRESS: address, FERRY_ADMIN_TOKEN: ADMIN_TOKEN };

    const balance = await ferryctl(['--json', 'balance'], env);
    assert.equal(balance.code, 0, balance.stderr);
    const parsed = JSON.parse(balance.stdout) as { amount: number; currency: string };
    assert.equal(parsed.amount, 1000);
    assert.equal(parsed.currency, 'EUR');

    const paused = await ferryctl(['pause', '--json'], env);
    assert.equal(paused.code, 0, paused.stderr);
    assert.equal((JSON.parse(paused.stdout) as { paused?: boolean }).paused, true);
    assert.equal(pipeline.state().paused, true);

    const hlr = await ferryctl(['hlr', '380501234567', '--id', '9', '--json'], env);
    assert.equal(hlr.code, 0, hlr.stderr);
    assert.deepEqual(
      [JSON.parse(hlr.stdout).status, JSON.parse(hlr.stdout).id],
      ['DELIVERED', '9'],
    );
    const assigned = await ferryctl(['hlr', '380501234567'], env);
    assert.equal(assigned.code, 0, assigned.stderr);
    assert.match(assigned.stdout, /^id: \d{16}$/m, 'without --id ferry assigns one and says which');

    const human = await ferryctl(['state', '--address', address, '--token', ADMIN_TOKEN]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /paused: true/);
    assert.match(human.stdout, new RegExp(`^version: ${FIXTURE_VERSION}$`, 'm'));
    // Partition 1 has had no batch fetched: its lag is unknown, not -1 records.
    assert.match(human.stdout, /^partitions: 0 \(lag 5\), 1 \(lag unknown\), 2 \(lag 7\)$/m);
    assert.match(human.stdout, /^total lag: 12 \(without partition 1: lag unknown\)$/m);
    assert.doesNotMatch(human.stdout, /-1/);
    const state = await ferryctl(['state', '--json'], env);
    assert.equal((JSON.parse(state.stdout) as { version?: string }).version, FIXTURE_VERSION);
  });

  test('a wrong token exits 1 naming UNAUTHENTICATED', async (t) => {
    const { address } = await startAdmin(t);
    const outcome = await ferryctl(['balance', '--address', address, '--token', 'nope']);
    assert.equal(outcome.code, 1);
    assert.match(outcome.stderr, /^ferryctl: UNAUTHENTICATED: /);
  });

  test('a gateway failure exits 1 with the status and the field', async (t) => {
    const { address } = await startAdmin(t);
    const outcome = await ferryctl([
      'templates',
      'create',
      '--address',
      address,
      '--token',
      ADMIN_TOKEN,
    ]);
    assert.equal(outcome.code, 1);
    assert.match(outcome.stderr, /INVALID_ARGUMENT: template: /);
  });

  test('--version prints the package version and exits 0 without a server', async () => {
    const { version } = JSON.parse(
      readFileSync(join(import.meta.dirname, '../../package.json'), 'utf8'),
    ) as { version: string };
    const outcome = await ferryctl(['--version']);
    assert.equal(outcome.code, 0, outcome.stderr);
    assert.equal(outcome.stdout.trim(), `ferryctl ${version}`);
  });

  test('Viber templates: create, list and delete with --fields', async (t) => {
    const { address } = await startAdmin(t);
    const env = { FERRY_ADMIN_ADDRESS: address, FERRY_ADMIN_TOKEN: ADMIN_TOKEN };
    const created = await ferryctl(
      ['templates', 'viber', 'create', '--json', '--fields', '{"name":"promo","text":"Hi"}'],
      env,
    );
    assert.equal(created.code, 0, created.stderr);
    const { result } = JSON.parse(created.stdout) as { result: { id: number; name: string } };
    assert.equal(result.name, 'promo');
    const listed = await ferryctl(['templates', 'viber', 'list', '--json'], env);
    assert.equal(listed.code, 0, listed.stderr);
    const list = (JSON.parse(listed.stdout) as { result: { name: string }[] }).result;
    assert.deepEqual(
      list.map((template) => template.name),
      ['promo'],
    );
    const deleted = await ferryctl(
      ['templates', 'viber', 'delete', '--fields', JSON.stringify({ id: result.id })],
      env,
    );
    assert.equal(deleted.code, 0, deleted.stderr);
    assert.match(deleted.stdout, /"deleted":1/);
    const missing = await ferryctl(['templates', 'viber', 'create'], env);
    assert.equal(missing.code, 2);
  });

  test('dlq list and dlq replay --dry-run pass their filters and selection', async (t) => {
    const replayer = new RecordingReplayer();
    const { address } = await startAdmin(t, { deadLetters: replayer });
    const env = { FERRY_ADMIN_ADDRESS: address, FERRY_ADMIN_TOKEN: ADMIN_TOKEN };
    const listed = await ferryctl(
      [
        'dlq',
        'list',
        '--in-doubt',
        '--type',
        'sms',
        '--since',
        '2026-11-23T19:00:00Z',
        '--offsets',
        '0:12,2:40',
        '--limit',
        '5',
      ],
      env,
    );
    assert.equal(listed.code, 0, listed.stderr);
    assert.match(listed.stdout, /^0 dead letters \(scanned 0\)$/m);
    const replayed = await ferryctl(
      ['dlq', 'replay', '--dry-run', '--error-contains', 'timed out', '--until', '2026-11-24'],
      env,
    );
    assert.equal(replayed.code, 0, replayed.stderr);
    assert.match(replayed.stdout, /^dry run: would replay 0 .*nothing was sent$/m);
    const strip = <T extends { signal?: AbortSignal }>({ signal: _signal, ...rest }: T) => rest;
    assert.deepEqual(replayer.listRequests.map(strip), [
      {
        limit: 5,
        type: 'sms',
        inDoubt: true,
        sinceMs: Date.parse('2026-11-23T19:00:00Z'),
        positions: [
          { partition: 0, offset: 12 },
          { partition: 2, offset: 40 },
        ],
      },
    ]);
    assert.deepEqual(replayer.requests.map(strip), [
      {
        limit: 1000,
        errorContains: 'timed out',
        untilMs: Date.parse('2026-11-24'),
        dryRun: true,
      },
    ]);
    const bad = await ferryctl(['dlq', 'list', '--offsets', '3'], env);
    assert.equal(bad.code, 2);
  });

  test('reads are retried on UNAVAILABLE per the service config; a pause is not', async (t) => {
    const attempts = { getBalance: 0, pauseConsumption: 0 };
    const address = await flakyServer(t, attempts);
    const env = { FERRY_ADMIN_ADDRESS: address, FERRY_ADMIN_TOKEN: ADMIN_TOKEN };
    const balance = await ferryctl(['balance', '--json'], env);
    assert.equal(balance.code, 0, balance.stderr);
    assert.equal((JSON.parse(balance.stdout) as { currency: string }).currency, 'EUR');
    assert.equal(attempts.getBalance, 2, 'the first UNAVAILABLE was retried once');

    const pause = await ferryctl(['pause'], env);
    assert.equal(pause.code, 1);
    assert.match(pause.stderr, /UNAVAILABLE/);
    assert.equal(attempts.pauseConsumption, 1, 'a call that changes something is not retried');
  });
});

/**
 * The admin service over the fixture's emulator, with GetBalance and PauseConsumption
 * answering UNAVAILABLE to their first attempt (as a replica restarting would).
 */
async function flakyServer(
  t: TestContext,
  attempts: { getBalance: number; pauseConsumption: number },
): Promise<string> {
  const fixture = await startAdmin(t);
  const handlers = createAdminHandlers({
    gateway: fixture.gateway,
    pipeline: fixture.pipeline,
    deadLetters: fixture.replayer,
  });
  const unavailableFirst = <A extends unknown[], R>(
    name: keyof typeof attempts,
    handler: (...args: A) => Promise<R>,
  ) => {
    return async (...args: A): Promise<R> => {
      attempts[name]++;
      if (attempts[name] === 1) throw new RpcError(status.UNAVAILABLE, 'restarting');
      return handler(...args);
    };
  };
  const server = new Server();
  server.addService(
    serviceDefinition(AdminService),
    implementService(AdminService, {
      ...handlers,
      getBalance: unavailableFirst('getBalance', handlers.getBalance),
      pauseConsumption: unavailableFirst('pauseConsumption', handlers.pauseConsumption),
    }),
  );
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  t.after(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
  return `127.0.0.1:${port}`;
}

test('a lag of -1 reads as unknown, and a total names the partitions it leaves out', () => {
  assert.equal(lagText(0n), '0');
  assert.equal(lagText(-1n), 'unknown');
  assert.equal(totalLagText(3n, [{ partition: 0, lag: 3n }]), '3');
  assert.equal(
    totalLagText(3n, [
      { partition: 0, lag: 3n },
      { partition: 4, lag: -1n },
      { partition: 5, lag: -1n },
    ]),
    '3 (without partitions 4, 5: lag unknown)',
  );
});
