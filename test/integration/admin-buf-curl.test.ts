/**
 * buf curl (the npm package of buf; a Go client ferry did not write) against a
 * running ferry process over the gRPC protocol, with the schema from server
 * reflection only: the services and methods it lists with each reflection
 * version, and one call of every AdminService method with the token (its answer
 * checked) and without (`unauthenticated`). buf curl has no `describe`; grpcurl's
 * test describes every service and message.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { AdminService } from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { Health } from '../../src/admin/gen/grpc/health/v1/health_pb.ts';
import {
  assertEveryMethodCovered,
  FERRY_TOKEN,
  methodCalls,
  startRunningFerry,
} from './admin-cli-calls.ts';

const buf = join(import.meta.dirname, '../../node_modules/.bin/buf');

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function bufCurl(args: readonly string[]): Promise<Outcome> {
  const argv = [
    'curl',
    '--protocol',
    'grpc',
    '--http2-prior-knowledge',
    '--timeout',
    '20s',
    ...args,
  ];
  return new Promise((resolve, reject) => {
    execFile(buf, argv, { timeout: 30_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

async function ok(args: readonly string[]): Promise<string> {
  const outcome = await bufCurl(args);
  assert.equal(outcome.code, 0, `buf curl ${args.join(' ')}:\n${outcome.stdout}${outcome.stderr}`);
  return outcome.stdout;
}

describe('buf curl against a running ferry', async () => {
  test('lists services and methods with reflection v1 and v1alpha, calls every method with and without a token', async (t) => {
    assertEveryMethodCovered();
    const { address } = await startRunningFerry(t);
    const base = `http://${address}`;

    for (const protocol of ['grpc-v1', 'grpc-v1alpha']) {
      const reflect = ['--reflect', '--reflect-protocol', protocol];
      const services = (await ok([...reflect, '--list-services', base])).trim().split('\n');
      assert.deepEqual(services.sort(), [AdminService.typeName, Health.typeName], protocol);
      const methods = (await ok([...reflect, '--list-methods', base])).trim().split('\n').sort();
      const expected = [AdminService, Health]
        .flatMap((service) => service.methods.map((m) => `${service.typeName}/${m.name}`))
        .sort();
      assert.deepEqual(methods, expected, protocol);
    }

    const answers = new Map<string, Record<string, unknown>>();
    for (const call of methodCalls) {
      const url = `${base}/${AdminService.typeName}/${call.method}`;
      const request = JSON.stringify(call.request(answers));
      const refused = await bufCurl(['-d', request, url]);
      assert.notEqual(refused.code, 0, `${call.method} without a token`);
      const error = JSON.parse(refused.stderr) as { code: string; message: string };
      assert.deepEqual(error, {
        code: 'unauthenticated',
        message: 'missing authorization: Bearer <token> metadata',
      });

      const answer = JSON.parse(
        await ok(['-H', `authorization: Bearer ${FERRY_TOKEN}`, '-d', request, url]),
      ) as Record<string, unknown>;
      call.check(answer);
      answers.set(call.method, answer);
    }
    const health = JSON.parse(await ok([`${base}/grpc.health.v1.Health/Check`]));
    assert.deepEqual(health, { status: 'SERVING' });
  });
});
