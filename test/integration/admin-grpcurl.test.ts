/**
 * The admin API through the real grpcurl binary and nothing but server reflection:
 * no .proto files on grpcurl's side. grpcurl links the descriptors it receives, so
 * a file that references another without naming it as a dependency fails here
 * ("cannot resolve type") although ferry's own client works.
 *
 * Both reflection versions: grpcurl asks v1 first and falls back to v1alpha when
 * the server does not implement v1. ferry's admin server answers v1; a second
 * server with the same services and only v1alpha reflection covers the fallback.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { describe, type TestContext, test } from 'node:test';
import type { DescEnum, DescFile, DescMessage, DescService } from '@bufbuild/protobuf';
import { Server, ServerCredentials, type ServiceDefinition } from '@grpc/grpc-js';
import { bearerTokenGate } from '../../src/admin/admin-auth.ts';
import { createAdminHandlers } from '../../src/admin/admin-handlers.ts';
import {
  AdminService,
  file_ferry_admin_v1_admin,
} from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import {
  file_grpc_health_v1_health,
  Health,
} from '../../src/admin/gen/grpc/health/v1/health_pb.ts';
import { implementService, serviceDefinition } from '../../src/admin/grpc-service.ts';
import { createHealthHandlers } from '../../src/admin/health-service.ts';
import { addReflection } from '../../src/admin/reflection.ts';
import { ADMIN_TOKEN, startAdmin } from '../admin/admin-fixture.ts';
import { findTool } from '../deploy/external-tools.ts';

const BEARER = `authorization: Bearer ${ADMIN_TOKEN}`;

interface GrpcurlResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/**
 * Runs `grpcurl -plaintext [flags] address [args]`. Asynchronous on purpose: the
 * server answering it runs in this process, so a blocking spawn would never be answered.
 */
function grpcurl(
  address: string,
  args: readonly string[],
  flags: readonly string[] = [],
): Promise<GrpcurlResult> {
  const binary = findTool('grpcurl');
  const argv = ['-plaintext', '-max-time', '20', ...flags, address, ...args];
  return new Promise((resolve, reject) => {
    execFile(binary, argv, { timeout: 30_000, encoding: 'utf8' }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
    });
  });
}

/** grpcurl that must succeed; the failure message carries what grpcurl printed. */
async function grpcurlOk(
  address: string,
  args: readonly string[],
  flags: readonly string[] = [],
): Promise<string> {
  const result = await grpcurl(address, args, flags);
  assert.equal(
    result.code,
    0,
    `grpcurl ${[...flags, ...args].join(' ')} exited with ${result.code}:\n${result.stdout}${result.stderr}`,
  );
  return result.stdout;
}

/** The files reflection describes and, transitively, the files they import. */
function describedFiles(): DescFile[] {
  const seen = new Map<string, DescFile>();
  const visit = (file: DescFile) => {
    if (seen.has(file.name)) return;
    seen.set(file.name, file);
    for (const dependency of file.dependencies) visit(dependency);
  };
  visit(file_ferry_admin_v1_admin);
  visit(file_grpc_health_v1_health);
  return [...seen.values()];
}

function nestedMessages(message: DescMessage): DescMessage[] {
  return [message, ...message.nestedMessages.flatMap(nestedMessages)];
}

const files = describedFiles();
const services: DescService[] = files.flatMap((file) => file.services);
const messages: DescMessage[] = files.flatMap((file) => file.messages.flatMap(nestedMessages));
const enums: DescEnum[] = [
  ...files.flatMap((file) => file.enums),
  ...messages.flatMap((message) => message.nestedEnums),
];

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Runs `fn` over `items`, at most `limit` at a time (the machine has few cores). */
async function eachLimited<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      await fn(item);
    }
  };
  await Promise.all(Array.from({ length: limit }, worker));
}

/** ferry's admin server (v1 and v1alpha reflection): grpcurl uses v1. */
async function startV1(t: TestContext): Promise<string> {
  return (await startAdmin(t)).address;
}

/**
 * The admin and health services of the fixture on a server whose only reflection
 * service is v1alpha, so grpcurl's v1 request is UNIMPLEMENTED and it falls back.
 */
async function startV1alphaOnly(t: TestContext): Promise<string> {
  const fixture = await startAdmin(t);
  const server = new Server();
  server.addService(
    serviceDefinition(AdminService),
    implementService(
      AdminService,
      createAdminHandlers({
        gateway: fixture.gateway,
        pipeline: fixture.pipeline,
        deadLetters: fixture.replayer,
      }),
      { gate: bearerTokenGate(ADMIN_TOKEN) },
    ),
  );
  server.addService(
    serviceDefinition(Health),
    implementService(
      Health,
      createHealthHandlers({ services: [AdminService.typeName], isServing: () => true }),
    ),
  );
  const reflectionPaths: string[] = [];
  addReflection(
    {
      addService(definition: ServiceDefinition, implementation) {
        const path = Object.values(definition)[0]?.path ?? '';
        reflectionPaths.push(path);
        if (path.startsWith('/grpc.reflection.v1alpha.')) {
          server.addService(definition, implementation);
        }
      },
    },
    [file_ferry_admin_v1_admin, file_grpc_health_v1_health],
  );
  assert.deepEqual(reflectionPaths.sort(), [
    '/grpc.reflection.v1.ServerReflection/ServerReflectionInfo',
    '/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo',
  ]);
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync('127.0.0.1:0', ServerCredentials.createInsecure(), (error, bound) =>
      error ? reject(error) : resolve(bound),
    );
  });
  t.after(() => new Promise<void>((resolve) => server.tryShutdown(() => resolve())));
  return `127.0.0.1:${port}`;
}

const versions = [
  { name: 'v1', start: startV1 },
  { name: 'v1alpha (fallback)', start: startV1alphaOnly },
];

for (const version of versions) {
  describe(`grpcurl with reflection ${version.name}`, () => {
    test('list names the admin and health services', async (t) => {
      const address = await version.start(t);
      const listed = (await grpcurlOk(address, ['list'])).trim().split('\n').sort();
      assert.deepEqual(listed, ['ferry.admin.v1.AdminService', 'grpc.health.v1.Health']);
      const methods = await grpcurlOk(address, ['list', 'ferry.admin.v1.AdminService']);
      for (const method of AdminService.methods) {
        assert.match(
          methods,
          new RegExp(`^ferry\\.admin\\.v1\\.AdminService\\.${method.name}$`, 'm'),
        );
      }
    });

    test('describe resolves every service, message and enum with its members', async (t) => {
      const address = await version.start(t);
      assert.ok(messages.some((m) => m.typeName === 'google.protobuf.Value'));
      await eachLimited(services, 2, async (service) => {
        const text = await grpcurlOk(address, ['describe', service.typeName]);
        assert.match(text, new RegExp(`^${escapeRegExp(service.typeName)} is a service:`, 'm'));
        for (const method of service.methods) {
          const streaming = method.methodKind === 'server_streaming' ? 'stream ' : '';
          assert.match(
            text,
            new RegExp(
              `rpc ${method.name} \\( \\.${escapeRegExp(method.input.typeName)} \\) returns \\( ${streaming}\\.${escapeRegExp(method.output.typeName)} \\);`,
            ),
            `${service.typeName}: ${method.name}`,
          );
        }
      });
      await eachLimited(messages, 3, async (message) => {
        const text = await grpcurlOk(address, ['describe', message.typeName]);
        assert.match(text, new RegExp(`^${escapeRegExp(message.typeName)} is a message:`, 'm'));
        for (const field of message.fields) {
          assert.match(
            text,
            new RegExp(`\\b${field.name} = ${field.number};`),
            `${message.typeName}: field ${field.name}\n${text}`,
          );
        }
      });
      await eachLimited(enums, 2, async (descEnum) => {
        const text = await grpcurlOk(address, ['describe', descEnum.typeName]);
        assert.match(text, new RegExp(`^${escapeRegExp(descEnum.typeName)} is an enum:`, 'm'));
        for (const value of descEnum.values) {
          assert.match(text, new RegExp(`\\b${value.name} = ${value.number};`));
        }
      });
    });

    test('proto3 optional fields stay optional, not synthetic oneofs', async (t) => {
      const address = await version.start(t);
      const text = await grpcurlOk(address, ['describe', 'ferry.admin.v1.GetMessageStatusRequest']);
      assert.match(text, /^\s*optional int64 id = 1;$/m);
      assert.doesNotMatch(text, /oneof/);
    });

    test('GetBalance and GetPipelineState answer with a bearer token', async (t) => {
      const address = await version.start(t);
      const balance = JSON.parse(
        await grpcurlOk(address, ['ferry.admin.v1.AdminService/GetBalance'], ['-H', BEARER]),
      ) as { amount: number; currency: string; raw: unknown };
      assert.deepEqual(balance, {
        amount: 1000,
        currency: 'EUR',
        raw: { amount: 1000, currency: 'EUR' },
      });

      const pipeline = JSON.parse(
        await grpcurlOk(address, ['ferry.admin.v1.AdminService/GetPipelineState'], ['-H', BEARER]),
      ) as {
        state: {
          running: boolean;
          partitions: { topic: string; partition?: number; lag: string }[];
          totalLag: string;
          commandsInFlight: number;
        };
      };
      assert.equal(pipeline.state.running, true);
      assert.equal(pipeline.state.totalLag, '12');
      assert.equal(pipeline.state.commandsInFlight, 11);
      assert.deepEqual(
        pipeline.state.partitions.map((p) => [p.topic, p.partition ?? 0, p.lag]),
        [
          ['ferry.commands', 0, '5'],
          ['ferry.commands', 1, '-1'],
          ['ferry.commands', 2, '7'],
        ],
      );
    });

    test('LookupHlr takes a JSON request with int64 fields', async (t) => {
      const address = await version.start(t);
      const answer = JSON.parse(
        await grpcurlOk(
          address,
          ['ferry.admin.v1.AdminService/LookupHlr'],
          ['-H', BEARER, '-d', '{"id": 41, "phone": "380501234567"}'],
        ),
      ) as { phone: string; status: string; id: string };
      assert.equal(answer.phone, '380501234567');
      assert.equal(answer.status, 'DELIVERED');
      assert.equal(answer.id, '41');
    });

    test('LookupHlr without an id answers with the id ferry assigned', async (t) => {
      const address = await version.start(t);
      const answer = JSON.parse(
        await grpcurlOk(
          address,
          ['ferry.admin.v1.AdminService/LookupHlr'],
          ['-H', BEARER, '-d', '{"phone": "380501234567"}'],
        ),
      ) as { status: string; id: string };
      assert.equal(answer.status, 'DELIVERED');
      assert.match(answer.id, /^\d{16}$/);
      const id = BigInt(answer.id);
      assert.ok(id >= 2n ** 52n && id <= 2n ** 53n - 1n, answer.id);
    });

    test('without a token the call is Unauthenticated', async (t) => {
      const address = await version.start(t);
      const result = await grpcurl(address, ['ferry.admin.v1.AdminService/GetBalance']);
      assert.notEqual(result.code, 0);
      assert.match(result.stderr, /Code: Unauthenticated/, result.stderr);
      assert.doesNotMatch(result.stderr, /resolve/);
    });

    test('grpc.health.v1.Health/Check is SERVING without a token', async (t) => {
      const address = await version.start(t);
      const whole = JSON.parse(await grpcurlOk(address, ['grpc.health.v1.Health/Check']));
      assert.deepEqual(whole, { status: 'SERVING' });
      const admin = JSON.parse(
        await grpcurlOk(
          address,
          ['grpc.health.v1.Health/Check'],
          ['-d', '{"service": "ferry.admin.v1.AdminService"}'],
        ),
      );
      assert.deepEqual(admin, { status: 'SERVING' });
    });
  });
}
