import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError } from '../../src/errors.ts';
import {
  type ConnectionRefusal,
  HttpServer,
  sendJson,
  sendText,
} from '../../src/http/http-server.ts';
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
  const refused: ConnectionRefusal[] = [];
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger(),
    maxConnections: 2,
    onConnectionRefused: (reason) => refused.push(reason),
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
  assert.deepEqual(refused, ['global']);
});

/** Opens a TCP connection from `localAddress`; resolves once it is connected. */
async function openFrom(t: TestContext, port: number, localAddress: string): Promise<Socket> {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  socket.on('error', () => undefined);
  t.after(() => socket.destroy());
  await once(socket, 'connect');
  return socket;
}

/** Sends one GET on `socket` and resolves with the first chunk of the answer, or `closed`. */
async function firstAnswer(socket: Socket, path: string): Promise<string> {
  const closed = once(socket, 'close').then(() => 'closed');
  socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
  return Promise.race([closed, once(socket, 'data').then(([chunk]) => String(chunk))]);
}

test('one client holds at most maxConnectionsPerClient; other clients still get in', async (t) => {
  const refused: ConnectionRefusal[] = [];
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger(),
    maxConnectionsPerClient: 2,
    onConnectionRefused: (reason) => refused.push(reason),
  });
  server.route('GET', '/healthz', (_req, res) => sendJson(res, 200, { ok: true }));
  t.after(() => server.stop());
  await server.start();
  const held = [
    await openFrom(t, server.port, '127.0.0.1'),
    await openFrom(t, server.port, '127.0.0.1'),
  ];
  // The kernel accepts a third from the same client; ferry resets it before any byte.
  const third = connect({ port: server.port, host: '127.0.0.1', localAddress: '127.0.0.1' });
  third.on('data', () => assert.fail('a refused connection gets no answer'));
  third.on('error', () => undefined);
  // Not events.once, which rejects on the reset's error event.
  await new Promise((resolve) => third.once('close', resolve));
  assert.deepEqual(refused, ['per_client']);
  // Another client is not held back by the first one's share.
  const other = await openFrom(t, server.port, '127.0.0.2');
  assert.match(await firstAnswer(other, '/healthz'), /^HTTP\/1\.1 200 /);
  // The held ones work, and a place freed is a place the client can take again.
  assert.match(await firstAnswer(held[0] as Socket, '/healthz'), /^HTTP\/1\.1 200 /);
  const left = once(held[1] as Socket, 'close');
  held[1]?.destroy();
  await left;
  // The server hears of the close a moment after the client.
  await sleep(100);
  const again = await openFrom(t, server.port, '127.0.0.1');
  assert.match(await firstAnswer(again, '/healthz'), /^HTTP\/1\.1 200 /);
  assert.deepEqual(refused, ['per_client']);
});

test('maxConnectionsPerClient 0 sets no per-client cap', async (t) => {
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger(),
    maxConnectionsPerClient: 0,
  });
  server.route('GET', '/healthz', (_req, res) => sendJson(res, 200, { ok: true }));
  t.after(() => server.stop());
  await server.start();
  const sockets = await Promise.all(
    Array.from({ length: 80 }, () => openFrom(t, server.port, '127.0.0.1')),
  );
  assert.match(await firstAnswer(sockets.at(-1) as Socket, '/healthz'), /^HTTP\/1\.1 200 /);
  for (const socket of sockets) socket.destroy();
});

test('a client sending its headers slowly is cut within headersTimeout and a second', async (t) => {
  const headersTimeoutMs = 2_000;
  // Two places: the slow client and the idle one take both, a probe gets in once one is freed.
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger(),
    headersTimeoutMs,
    maxConnections: 2,
  });
  server.route('GET', '/healthz', (_req, res) => sendJson(res, 200, { ok: true }));
  t.after(() => server.stop());
  await server.start();
  const started = Date.now();
  // One sends a header line every 200 ms and never ends the head.
  const slow = await openFrom(t, server.port, '127.0.0.1');
  slow.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
  const drip = setInterval(() => slow.writable && slow.write('X-Slow: 1\r\n'), 200);
  t.after(() => clearInterval(drip));
  // One sends nothing and never reads: it never closes its side by itself.
  const idle = await openFrom(t, server.port, '127.0.0.1');
  idle.pause();
  // Not events.once: a write after the cut is an error event before the close.
  const slowCut = new Promise<number>((resolve) =>
    slow.once('close', () => resolve(Date.now() - started)),
  );
  // The idle client never learns it was cut; the server's places tell: both are free again
  // when two probes at once are answered.
  let freedMs = 0;
  while (freedMs === 0 && Date.now() - started < headersTimeoutMs + 5_000) {
    await sleep(100);
    const answers = await Promise.all(
      [1, 2].map(() =>
        fetch(`${server.url}/healthz`, {
          headers: { connection: 'close' },
          signal: AbortSignal.timeout(1_000),
        }).then(
          (answer) => answer.status,
          () => 0,
        ),
      ),
    );
    if (answers.every((status) => status === 200)) freedMs = Date.now() - started;
  }
  const slowMs = await Promise.race([slowCut, sleep(5_000).then(() => Number.POSITIVE_INFINITY)]);
  clearInterval(drip);
  assert.ok(
    slowMs >= headersTimeoutMs - 100,
    `the slow client kept until the timeout (${slowMs} ms)`,
  );
  assert.ok(
    slowMs <= headersTimeoutMs + 1_500,
    `the slow client cut ${slowMs} ms after connecting`,
  );
  assert.ok(freedMs > 0, 'both places were freed');
  assert.ok(
    freedMs <= headersTimeoutMs + 1_500,
    `both places free ${freedMs} ms after the clients connected`,
  );
});

test('a client that asks for answers and never reads them is cut after the idle timeout', async (t) => {
  const idleTimeoutMs = 1_000;
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: silentLogger(),
    idleTimeoutMs,
    maxConnections: 1,
    maxConnectionsPerClient: 0,
  });
  // An answer larger than the socket buffers, so writing it stalls.
  server.route('GET', '/metrics', (_req, res) => sendText(res, 200, 'x'.repeat(256 * 1024)));
  t.after(() => server.stop());
  await server.start();
  const greedy = await openFrom(t, server.port, '127.0.0.1');
  greedy.pause();
  greedy.write('GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n'.repeat(100));
  const started = Date.now();
  let freedMs = 0;
  while (freedMs === 0 && Date.now() - started < idleTimeoutMs + 5_000) {
    await sleep(200);
    const status = await fetch(`${server.url}/metrics`, {
      headers: { connection: 'close' },
      signal: AbortSignal.timeout(1_000),
    }).then(
      async (answer) => {
        await answer.arrayBuffer();
        return answer.status;
      },
      () => 0,
    );
    if (status === 200) freedMs = Date.now() - started;
  }
  assert.ok(freedMs > 0, 'the only place was freed');
  assert.ok(freedMs <= idleTimeoutMs + 2_000, `freed ${freedMs} ms after the requests`);
});

/** Every answer curl gets for `args`: the status line, headers without Date, and the body. */
async function curlAnswer(args: readonly string[]): Promise<string> {
  const answer = await curl(['-i', ...args]);
  return answer
    .split('\r\n')
    .filter((line) => !/^date:/i.test(line))
    .join('\n');
}

test('a route visible only to its token: any method without it gets the 404 of an unknown path', async (t) => {
  const token = 's3cret';
  const server = await startServer(t, (s) => {
    s.route('POST', '/callbacks/:token', (_req, res, params) => sendJson(res, 200, params), {
      visibleTo: (params) => params.token === token,
    });
    s.route('GET', '/metrics', (_req, res) => sendJson(res, 200, {}));
  });
  const unknown = await curlAnswer([`${server.url}/nothing/here`]);
  assert.match(unknown, /^HTTP\/1\.1 404 /);
  for (const method of ['GET', 'HEAD', 'PUT', 'DELETE', 'PATCH', 'OPTIONS']) {
    const args = method === 'HEAD' ? ['-I'] : ['-X', method];
    const hidden = await curlAnswer([...args, `${server.url}/callbacks/wrong`]);
    const elsewhere = await curlAnswer([...args, `${server.url}/nothing/here`]);
    assert.equal(hidden, elsewhere, `${method} /callbacks/wrong answers as an unknown path`);
    assert.doesNotMatch(hidden, /allow:|405/i, method);
  }
  // A body sent with it changes nothing: it is read and dropped, and the connection closes.
  const posted = await curlAnswer(['-d', 'x=1', `${server.url}/callbacks/wrong/extra`]);
  assert.equal(posted, await curlAnswer(['-d', 'x=1', `${server.url}/nothing/here`]));
  assert.match(posted, /^connection: close$/im);
  // node's own client too; with the token, another method still learns what is allowed.
  const wrong = await fetch(`${server.url}/callbacks/wrong`, { method: 'DELETE' });
  assert.equal(wrong.status, 404);
  assert.equal(wrong.headers.get('allow'), null);
  await wrong.arrayBuffer();
  const right = await fetch(`${server.url}/callbacks/${token}`);
  assert.equal(right.status, 405);
  assert.equal(right.headers.get('allow'), 'POST');
  await right.arrayBuffer();
  const metrics = await fetch(`${server.url}/metrics`, { method: 'POST', body: 'x' });
  assert.equal(metrics.status, 405, 'a route without a secret shows itself as before');
  await metrics.arrayBuffer();
});
