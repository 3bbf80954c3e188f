import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { type TestContext, test } from 'node:test';
import { FerryError } from '../../src/errors.ts';
import { HttpServer, sendJson } from '../../src/http/http-server.ts';
import { createLogger } from '../../src/observability/logger.ts';

function silentLogger(lines: string[] = []) {
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return createLogger({ destination, level: 'debug' });
}

async function startServer(t: TestContext, setup: (server: HttpServer) => void, lines?: string[]) {
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: silentLogger(lines) });
  setup(server);
  t.after(() => server.stop());
  await server.start();
  return server;
}

test('routes match literal segments and decode parameters', async (t) => {
  const server = await startServer(t, (s) => {
    s.route('POST', '/callbacks/:token', (_req, res, params) => sendJson(res, 200, params));
    s.route('GET', '/healthz', (_req, res) => sendJson(res, 200, { ok: true }));
  });
  assert.match(server.url, /^http:\/\/127\.0\.0\.1:\d+$/);
  assert.ok(server.port > 0);
  const posted = await fetch(`${server.url}/callbacks/a%2Fb%20c?x=1`, {
    method: 'POST',
    body: '{}',
  });
  assert.equal(posted.status, 200);
  assert.deepEqual(await posted.json(), { token: 'a/b c' });
  const health = await fetch(`${server.url}/healthz/`);
  assert.equal(health.status, 200);
});

test('unknown paths get 404 and known paths with another method 405 with Allow', async (t) => {
  const server = await startServer(t, (s) => {
    s.route('GET', '/metrics', (_req, res) => sendJson(res, 200, {}));
  });
  assert.equal((await fetch(`${server.url}/nothing`)).status, 404);
  assert.equal((await fetch(`${server.url}/metrics/extra`)).status, 404);
  const wrong = await fetch(`${server.url}/metrics`, { method: 'POST', body: 'x' });
  assert.equal(wrong.status, 405);
  assert.equal(wrong.headers.get('allow'), 'GET');
  await wrong.arrayBuffer();
});

test('a throwing handler answers 500 and the server keeps serving', async (t) => {
  const lines: string[] = [];
  const server = await startServer(
    t,
    (s) => {
      s.route('GET', '/sync-throw', () => {
        throw new Error('handler broke');
      });
      s.route('GET', '/async-throw', async () => {
        await Promise.resolve();
        throw new Error('async handler broke');
      });
      s.route('GET', '/callbacks/:token', () => {
        throw new Error('no token in logs');
      });
      s.route('GET', '/fine', (_req, res) => sendJson(res, 200, { fine: true }));
    },
    lines,
  );
  assert.equal((await fetch(`${server.url}/sync-throw`)).status, 500);
  assert.equal((await fetch(`${server.url}/async-throw`)).status, 500);
  assert.equal((await fetch(`${server.url}/callbacks/s3cret-token`)).status, 500);
  assert.equal((await fetch(`${server.url}/fine`)).status, 200);
  const logged = lines.join('');
  assert.match(logged, /handler broke/);
  assert.match(logged, /"route":"\/callbacks\/:token"/);
  assert.equal(logged.includes('s3cret-token'), false);
});

test('lifecycle: start and stop are idempotent; routes only before start', async (t) => {
  const server = new HttpServer({ host: '127.0.0.1', port: 0, logger: silentLogger() });
  t.after(() => server.stop());
  server.route('GET', '/a', (_req, res) => sendJson(res, 200, {}));
  assert.throws(
    () => server.route('GET', '/a', () => undefined),
    (error: unknown) => error instanceof FerryError && error.code === 'illegal_state',
  );
  await Promise.all([server.start(), server.start()]);
  assert.throws(() => server.route('GET', '/b', () => undefined), FerryError);
  const url = server.url;
  await Promise.all([server.stop(), server.stop()]);
  await assert.rejects(fetch(`${url}/a`));
  await assert.rejects(server.start(), FerryError);
});

test('stop closes idle keep-alive connections promptly', async (t) => {
  const server = await startServer(t, (s) => {
    s.route('GET', '/a', (_req, res) => sendJson(res, 200, {}));
  });
  const answer = await fetch(`${server.url}/a`, { headers: { connection: 'keep-alive' } });
  await answer.arrayBuffer();
  const started = Date.now();
  await server.stop();
  assert.ok(Date.now() - started < 2_000, 'stop did not wait for the idle socket');
});

test('start fails with a FerryError when the port is taken', async (t) => {
  const first = await startServer(t, () => undefined);
  const second = new HttpServer({ host: '127.0.0.1', port: first.port, logger: silentLogger() });
  t.after(() => second.stop());
  await assert.rejects(second.start(), /cannot listen/);
});

/** Runs curl (a client ferry did not write); resolves with its stdout. */
function curl(args: readonly string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile('curl', ['-s', '--max-time', '10', ...args], (error, stdout) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve(stdout);
    });
  });
}

test('a request head larger than maxHeaderBytes is 431, and a normal one still passes', async (t) => {
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger(),
    maxHeaderBytes: 4096,
  });
  server.route('GET', '/metrics', (_req, res) => sendJson(res, 200, { ok: true }));
  t.after(() => server.stop());
  await server.start();
  const statusOf = (header: string) =>
    curl(['-o', '/dev/null', '-w', '%{http_code}', '-H', header, `${server.url}/metrics`]);
  assert.equal(await statusOf(`X-Big: ${'a'.repeat(8000)}`), '431');
  assert.equal(await statusOf(`X-Small: ${'a'.repeat(1000)}`), '200');
});

test('connections beyond maxConnections are closed at accept; the ones held keep working', async (t) => {
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger(),
    maxConnections: 2,
  });
  server.route('GET', '/healthz', (_req, res) => sendJson(res, 200, { ok: true }));
  t.after(() => server.stop());
  await server.start();
  const open = async () => {
    const socket = connect(server.port, '127.0.0.1');
    t.after(() => socket.destroy());
    await once(socket, 'connect');
    return socket;
  };
  const held = [await open(), await open()];
  // A third connection is accepted by the kernel, then closed by node before any byte.
  const third = await open();
  third.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  const [answer] = await Promise.race([
    once(third, 'close').then(() => ['closed']),
    once(third, 'data').then(([chunk]) => [String(chunk)]),
  ]);
  assert.equal(answer, 'closed');
  const first = held[0];
  assert.ok(first);
  first.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  const [reply] = (await once(first, 'data')) as [Buffer];
  assert.match(reply.toString('utf8'), /^HTTP\/1\.1 200 /);
});
