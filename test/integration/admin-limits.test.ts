/**
 * The bounds of the admin surface: request size, streams per connection, Health.Watch
 * streams, deadlines that reach the gateway request, and the warning for a plaintext
 * API beyond loopback.
 */
import assert from 'node:assert/strict';
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { connect, createServer, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { describe, type TestContext, test } from 'node:test';
import { type ServiceError, status } from '@grpc/grpc-js';
import { defaultAdminLimits } from '../../src/admin/admin-limits.ts';
import { AdminServer } from '../../src/admin/admin-server.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { ADMIN_TOKEN, RecordingReplayer, startAdmin } from '../admin/admin-fixture.ts';
import { InMemoryPipeline } from '../admin/in-memory-pipeline.ts';
import { findTool } from '../deploy/external-tools.ts';

async function rejection(promise: Promise<unknown>): Promise<ServiceError> {
  try {
    await promise;
  } catch (error: unknown) {
    return error as ServiceError;
  }
  assert.fail('the call succeeded');
}

function grpcurl(args: readonly string[]): Promise<{ code: number; out: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      findTool('grpcurl'),
      ['-plaintext', '-max-time', '20', ...args],
      { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve({ code: error ? Number(error.code) : 0, out: `${stdout}${stderr}` });
      },
    );
  });
}

/**
 * A TCP relay in front of the gateway that records when the client side of each
 * connection closes: how the test sees that ferry aborted its upstream request.
 */
async function relay(t: TestContext, targetPort: number) {
  const clientClosedAt: number[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(targetPort, '127.0.0.1');
    sockets.add(client);
    sockets.add(upstream);
    client.pipe(upstream);
    upstream.pipe(client);
    client.once('close', () => {
      clientClosedAt.push(Date.now());
      upstream.destroy();
    });
    upstream.once('close', () => client.destroy());
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(async () => {
    for (const socket of sockets) socket.destroy();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return { url: `http://127.0.0.1:${address.port}`, clientClosedAt };
}

describe('admin API limits', async () => {
  test('a request larger than the receive limit is RESOURCE_EXHAUSTED (grpcurl) and reaches nothing', async (t) => {
    const { address, emulator } = await startAdmin(t, {
      limits: { ...defaultAdminLimits, maxReceiveBytes: 64 * 1024 },
    });
    const big = JSON.stringify({ template: 'x'.repeat(100 * 1024), name: 'big' });
    const refused = await grpcurl([
      '-H',
      `authorization: Bearer ${ADMIN_TOKEN}`,
      '-d',
      big,
      address,
      'ferry.admin.v1.AdminService/CreateTemplate',
    ]);
    assert.notEqual(refused.code, 0);
    assert.match(refused.out, /Code: ResourceExhausted/, refused.out);
    assert.equal(emulator.stats().requests, 0);

    const small = JSON.stringify({ template: 'Your code is {code}', name: 'otp' });
    const accepted = await grpcurl([
      '-H',
      `authorization: Bearer ${ADMIN_TOKEN}`,
      '-d',
      small,
      address,
      'ferry.admin.v1.AdminService/CreateTemplate',
    ]);
    assert.equal(accepted.code, 0, accepted.out);
  });

  test('streams per connection are bounded: with 1, two calls on one connection run one after the other', async (t) => {
    const { client, emulator } = await startAdmin(t, {
      limits: { ...defaultAdminLimits, maxConcurrentStreams: 1 },
    });
    const admin = client(ADMIN_TOKEN);
    await admin.unary('getPipelineState', {}); // connected before timing
    emulator.setKnobs({ latencyMs: 700 });
    const started = Date.now();
    await Promise.all([admin.unary('getBalance', {}), admin.unary('getBalance', {})]);
    const elapsed = Date.now() - started;
    assert.ok(elapsed >= 1300, `the second call waited for the first (${elapsed} ms)`);
  });

  test('one Health.Watch stream beyond the bound is RESOURCE_EXHAUSTED; a freed slot is usable again', async (t) => {
    const { health } = await startAdmin(t, {
      limits: { ...defaultAdminLimits, maxHealthWatches: 2 },
    });
    const probe = health();
    const open = async () => {
      const stream = probe.serverStream('watch', { service: '' });
      stream.on('error', () => undefined);
      await once(stream, 'data');
      return stream;
    };
    const first = await open();
    const second = await open();
    const third = probe.serverStream('watch', { service: '' });
    const [error] = (await once(third, 'error')) as [ServiceError];
    assert.equal(error.code, status.RESOURCE_EXHAUSTED);
    assert.match(error.details, /at most 2/);

    first.cancel();
    const deadline = Date.now() + 5000;
    let reopened: Awaited<ReturnType<typeof open>> | undefined;
    while (!reopened) {
      try {
        reopened = await open();
      } catch {
        if (Date.now() > deadline) assert.fail('the freed slot never became usable');
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
    reopened.cancel();
    second.cancel();
  });

  test('a 300 ms deadline against a 3 s gateway is DEADLINE_EXCEEDED at once, and the gateway request is aborted', async (t) => {
    const fixture = await startAdmin(t);
    const port = Number(new URL(fixture.emulator.url).port);
    const { url, clientClosedAt } = await relay(t, port);
    const { admin } = await startAdmin(t, { syncBaseUrl: url });
    // The relay is in front of the first fixture's emulator; slow that one down.
    fixture.emulator.setKnobs({ latencyMs: 3000 });
    const started = Date.now();
    const error = await rejection(admin.unary('getBalance', {}, { timeoutMs: 300 }));
    const failedAfter = Date.now() - started;
    assert.equal(error.code, status.DEADLINE_EXCEEDED);
    assert.ok(failedAfter < 1500, `failed after ${failedAfter} ms`);
    const deadline = Date.now() + 2000;
    while (clientClosedAt.length === 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    const closedAfter = (clientClosedAt[0] ?? Number.POSITIVE_INFINITY) - started;
    assert.ok(
      closedAfter < 2000,
      `ferry closed its gateway connection ${closedAfter} ms in, before the 3 s answer`,
    );
  });
});

describe('admin API limits seen by grpcurl', async () => {
  test('-max-time 0.3 against a 3 s gateway is DeadlineExceeded within a second', async (t) => {
    const { address, emulator } = await startAdmin(t);
    emulator.setKnobs({ latencyMs: 3000 });
    const started = Date.now();
    const outcome = await grpcurl([
      '-H',
      `authorization: Bearer ${ADMIN_TOKEN}`,
      '-max-time',
      '0.3',
      address,
      'ferry.admin.v1.AdminService/GetBalance',
    ]);
    assert.match(outcome.out, /Code: DeadlineExceeded/, outcome.out);
    assert.ok(Date.now() - started < 1500, 'grpcurl did not wait for the gateway');
  });

  test('two grpcurl Health/Watch streams fill a bound of 2; a third is ResourceExhausted', async (t) => {
    const { address } = await startAdmin(t, {
      limits: { ...defaultAdminLimits, maxHealthWatches: 2 },
    });
    const watchers = [0, 1].map(() => {
      const child = spawn(findTool('grpcurl'), [
        '-plaintext',
        address,
        'grpc.health.v1.Health/Watch',
      ]);
      t.after(() => {
        child.kill();
      });
      return child;
    });
    // Each watcher prints the first status once its stream is open.
    await Promise.all(watchers.map((child) => once(child.stdout, 'data')));
    const third = await grpcurl([address, 'grpc.health.v1.Health/Watch']);
    assert.match(third.out, /Code: ResourceExhausted/, third.out);
  });
});

describe('plaintext beyond loopback', async () => {
  async function startLogged(t: TestContext, host: string): Promise<string> {
    const lines: string[] = [];
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        lines.push(chunk.toString('utf8'));
        done();
      },
    });
    const server = new AdminServer({
      host,
      port: 0,
      gateway: { callSync: () => Promise.reject(new Error('unused')) },
      pipeline: new InMemoryPipeline(),
      deadLetters: new RecordingReplayer(),
      adminToken: ADMIN_TOKEN,
      isKafkaConnected: () => true,
      logger: createLogger({ level: 'info', destination }),
      metrics: createMetrics(),
    });
    await server.start();
    t.after(() => server.stop(1000));
    return lines.join('');
  }

  test('listening on 0.0.0.0 without TLS logs a warning; on loopback it does not', async (t) => {
    const wide = await startLogged(t, '0.0.0.0');
    assert.match(wide, /"level":"warn".*WITHOUT TLS/);
    const loopback = await startLogged(t, '127.0.0.1');
    assert.doesNotMatch(loopback, /WITHOUT TLS/);
  });
});
