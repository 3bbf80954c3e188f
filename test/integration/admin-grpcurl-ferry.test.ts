/**
 * grpcurl against a running ferry process, through server reflection only: list,
 * describe of every service and message, and one call of every AdminService method
 * with the token (its answer checked) and without (Unauthenticated, nothing done).
 *
 * With FERRY_DOCS_TRANSCRIPT=<file>, every command and its output are appended to
 * that file: docs/admin-api.md shows them.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { appendFileSync } from 'node:fs';
import { describe, test } from 'node:test';
import type { DescFile, DescMessage } from '@bufbuild/protobuf';
import { file_ferry_admin_v1_admin } from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { file_grpc_health_v1_health } from '../../src/admin/gen/grpc/health/v1/health_pb.ts';
import { findTool } from '../deploy/external-tools.ts';
import {
  assertEveryMethodCovered,
  FERRY_TOKEN,
  methodCalls,
  PACKAGE_VERSION,
  RUNNING_LIMITS,
  startRunningFerry,
} from './admin-cli-calls.ts';

interface Outcome {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function transcript(args: readonly string[], outcome: Outcome): void {
  const file = process.env.FERRY_DOCS_TRANSCRIPT;
  if (!file) return;
  const shown = args
    .map((arg) => arg.replace(FERRY_TOKEN, '$FERRY_ADMIN_TOKEN'))
    .map((arg) => (/^[\w./:-]+$/.test(arg) ? arg : `'${arg}'`))
    .join(' ');
  appendFileSync(file, `$ grpcurl ${shown}\n${outcome.stdout}${outcome.stderr}\n`);
}

function grpcurl(args: readonly string[]): Promise<Outcome> {
  const argv = ['-plaintext', ...args];
  return new Promise((resolve, reject) => {
    execFile(findTool('grpcurl'), argv, { timeout: 30_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') return reject(error);
      const outcome = { code: error ? Number(error.code) : 0, stdout, stderr };
      transcript(argv, outcome);
      resolve(outcome);
    });
  });
}

async function ok(args: readonly string[]): Promise<string> {
  const outcome = await grpcurl(args);
  assert.equal(outcome.code, 0, `grpcurl ${args.join(' ')}:\n${outcome.stdout}${outcome.stderr}`);
  return outcome.stdout;
}

function messagesOf(files: readonly DescFile[]): DescMessage[] {
  const nested = (m: DescMessage): DescMessage[] => [m, ...m.nestedMessages.flatMap(nested)];
  return files.flatMap((file) => file.messages.flatMap(nested));
}

describe('grpcurl against a running ferry', async () => {
  test('list, describe every service and message, call every method with and without a token', async (t) => {
    assertEveryMethodCovered();
    const { address } = await startRunningFerry(t);
    const bearer = `authorization: Bearer ${FERRY_TOKEN}`;

    const services = (await ok([address, 'list'])).trim().split('\n').sort();
    assert.deepEqual(services, ['ferry.admin.v1.AdminService', 'grpc.health.v1.Health']);
    for (const file of [file_ferry_admin_v1_admin, file_grpc_health_v1_health]) {
      for (const service of file.services) {
        const text = await ok([address, 'describe', service.typeName]);
        assert.match(text, new RegExp(`^${service.typeName.replaceAll('.', '\\.')} is a service:`));
        for (const method of service.methods)
          assert.match(text, new RegExp(`rpc ${method.name} \\(`));
      }
    }
    for (const message of messagesOf([file_ferry_admin_v1_admin, file_grpc_health_v1_health])) {
      const text = await ok([address, 'describe', message.typeName]);
      for (const field of message.fields) {
        assert.match(text, new RegExp(`\\b${field.name} = ${field.number};`), message.typeName);
      }
    }

    const answers = new Map<string, Record<string, unknown>>();
    for (const call of methodCalls) {
      const path = `ferry.admin.v1.AdminService/${call.method}`;
      const request = JSON.stringify(call.request(answers));
      const refused = await grpcurl(['-d', request, address, path]);
      assert.notEqual(refused.code, 0, `${call.method} without a token`);
      assert.match(refused.stderr, /Code: Unauthenticated\n\s*Message: missing authorization/);

      const answer = JSON.parse(await ok(['-H', bearer, '-d', request, address, path])) as Record<
        string,
        unknown
      >;
      call.check(answer);
      answers.set(call.method, answer);
    }
    assert.deepEqual(JSON.parse(await ok([address, 'grpc.health.v1.Health/Check'])), {
      status: 'SERVING',
    });
  });

  test('the configured limits and the build info, on the running process (grpcurl, curl)', async (t) => {
    const { address, httpUrl, opsUrl } = await startRunningFerry(t);
    const big = JSON.stringify({ template: 'x'.repeat(RUNNING_LIMITS.grpcMaxReceiveBytes) });
    const refused = await grpcurl([
      '-H',
      `authorization: Bearer ${FERRY_TOKEN}`,
      '-d',
      big,
      address,
      'ferry.admin.v1.AdminService/CreateTemplate',
    ]);
    assert.match(refused.stderr, /Code: ResourceExhausted/, refused.stderr);

    const metrics = await curl([`${opsUrl}/metrics`]);
    assert.ok(
      metrics.includes(
        `\nferry_build_info{version="${PACKAGE_VERSION}",node="${process.versions.node}"} 1\n`,
      ),
      'ferry_build_info on /metrics',
    );
    // Both ports hold the same bound; /metrics is on the operations port only.
    const header = `X-Big: ${'a'.repeat(RUNNING_LIMITS.httpMaxHeaderBytes * 2)}`;
    for (const url of [`${opsUrl}/metrics`, `${httpUrl}/callbacks/x`]) {
      const status = await curl(['-o', '/dev/null', '-w', '%{http_code}', '-H', header, url]);
      assert.equal(status, '431', url);
    }
    const elsewhere = await curl(['-o', '/dev/null', '-w', '%{http_code}', `${httpUrl}/metrics`]);
    assert.equal(elsewhere, '404', 'the public port serves no metrics');
  });
});

function curl(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-s', '--max-time', '10', ...args], (error, stdout) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve(stdout);
    });
  });
}
