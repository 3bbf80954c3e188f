import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { promisify } from 'node:util';
import { ADMIN_TOKEN, startAdmin } from '../admin/admin-fixture.ts';

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
    assert.equal((JSON.parse(hlr.stdout) as { status: string }).status, 'DELIVERED');

    const human = await ferryctl(['state', '--address', address, '--token', ADMIN_TOKEN]);
    assert.equal(human.code, 0, human.stderr);
    assert.match(human.stdout, /paused: true/);
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
});
