/**
 * Answers given before a request's body arrived (src/http/early-answer.ts): the sender sees
 * the answer even when it reads nothing before its body is out, and the rest of the body is
 * read within the server's bounds in bytes and time, past which the connection is cut.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect, type Socket } from 'node:net';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { DiscardBounds } from '../../src/http/early-answer.ts';
import { HttpServer, type HttpServerOptions, sendJson } from '../../src/http/http-server.ts';
import { createLogger } from '../../src/observability/logger.ts';

const MiB = 1024 * 1024;

async function startServer(
  t: TestContext,
  options: Partial<HttpServerOptions> & { discardBounds?: DiscardBounds } = {},
): Promise<HttpServer> {
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: createLogger({ level: 'silent' }),
    ...options,
  });
  server.route('GET', '/healthz', (_req, res) => sendJson(res, 200, { ok: true }));
  t.after(() => server.stop());
  await server.start();
  return server;
}

/** A connection that records what it receives and how it ends. */
interface Client {
  readonly socket: Socket;
  received(): string;
  /** Resolves with the time (Date.now()) the connection ended, and how. */
  readonly ended: Promise<{ at: number; how: string }>;
}

function open(t: TestContext, port: number): Promise<Client> {
  const socket = connect({ port, host: '127.0.0.1' });
  t.after(() => socket.destroy());
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<{ at: number; how: string }>((resolve) => {
    socket.once('error', (error: NodeJS.ErrnoException) =>
      resolve({ at: Date.now(), how: error.code ?? error.message }),
    );
    socket.once('end', () => resolve({ at: Date.now(), how: 'end' }));
    socket.once('close', () => resolve({ at: Date.now(), how: 'close' }));
  });
  return once(socket, 'connect').then(() => ({
    socket,
    received: () => Buffer.concat(chunks).toString('latin1'),
    ended,
  }));
}

/** Writes `bytes` in 64 KiB pieces as fast as the connection takes them; resolves with how many went out. */
async function writeBody(socket: Socket, bytes: number): Promise<number> {
  const piece = Buffer.alloc(64 * 1024, 'x');
  let written = 0;
  while (written < bytes && !socket.destroyed) {
    const size = Math.min(piece.length, bytes - written);
    const ok = socket.write(size === piece.length ? piece : piece.subarray(0, size));
    written += size;
    if (!ok) {
      await Promise.race([once(socket, 'drain'), once(socket, 'close')]).catch(() => undefined);
    }
  }
  return written;
}

test('a sender that reads only after writing its whole 5 MB body gets the 404', {
  timeout: 20_000,
}, async (t) => {
  const server = await startServer(t);
  const client = await open(t, server.port);
  const bytes = 5 * MiB;
  // Python's http.client: the body goes out whole before a byte of the answer is read.
  client.socket.pause();
  client.socket.write(`POST /nothing HTTP/1.1\r\nHost: x\r\nContent-Length: ${bytes}\r\n\r\n`);
  const writeError = once(client.socket, 'error').then(([error]) => error as Error);
  const wrote = await Promise.race([
    writeBody(client.socket, bytes).then(
      () => new Promise<string>((resolve) => client.socket.end(() => resolve('written'))),
    ),
    writeError.then((error) => `failed: ${error.message}`),
  ]);
  assert.equal(wrote, 'written', 'the whole body went out');
  client.socket.resume();
  const { how } = await client.ended;
  assert.equal(how, 'end', 'the server closed the connection cleanly');
  assert.match(client.received(), /^HTTP\/1\.1 404 Not Found\r\n/);
  assert.match(client.received(), /\r\nConnection: close\r\n/i);
  assert.match(client.received(), /\r\n\r\nNot Found\n$/);
});

test('past the byte bound the connection is cut; a body declared past it is not read at all', {
  timeout: 20_000,
}, async (t) => {
  const server = await startServer(t, { discardBounds: { maxBytes: 1 * MiB, timeoutMs: 10_000 } });
  // Chunked, so the length is not known ahead: read up to the bound, then cut.
  const chunked = await open(t, server.port);
  chunked.socket.write('POST /nothing HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n');
  const piece = Buffer.alloc(64 * 1024, 'x');
  const chunk = Buffer.concat([
    Buffer.from(`${piece.length.toString(16)}\r\n`),
    piece,
    Buffer.from('\r\n'),
  ]);
  let sent = 0;
  let cut = false;
  void chunked.ended.then(() => {
    cut = true;
  });
  while (!cut && sent < 64 * MiB) {
    if (!chunked.socket.write(chunk)) {
      await Promise.race([once(chunked.socket, 'drain'), chunked.ended]).catch(() => undefined);
    }
    sent += piece.length;
  }
  await chunked.ended;
  assert.match(chunked.received(), /^HTTP\/1\.1 404 Not Found\r\n/);
  // What the kernel buffers on both sides comes on top of the bound.
  t.diagnostic(`cut after ${sent / MiB} MiB of chunks`);
  assert.ok(sent < 16 * MiB, `cut after ${sent / MiB} MiB of chunks`);

  // Declared longer than the bound: answered and closed at once, as before.
  const declared = await open(t, server.port);
  declared.socket.write(
    `POST /nothing HTTP/1.1\r\nHost: x\r\nContent-Length: ${2 * MiB}\r\n\r\n${'x'.repeat(1000)}`,
  );
  const started = Date.now();
  const { at } = await declared.ended;
  assert.match(declared.received(), /^HTTP\/1\.1 404 Not Found\r\n/);
  assert.ok(at - started < 1_000, `closed ${at - started} ms after the answer`);
});

test('past the time bound the connection is cut, and it counted for its client until then', {
  timeout: 20_000,
}, async (t) => {
  const timeoutMs = 800;
  const server = await startServer(t, {
    discardBounds: { maxBytes: 64 * MiB, timeoutMs },
    maxConnectionsPerClient: 1,
  });
  const slow = await open(t, server.port);
  slow.socket.write('POST /nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\nx');
  const drip = setInterval(() => slow.socket.writable && slow.socket.write('x'), 50);
  t.after(() => clearInterval(drip));
  while (!slow.received().includes('Not Found\n')) await sleep(10);
  const answeredAt = Date.now();
  assert.match(slow.received(), /^HTTP\/1\.1 404 Not Found\r\n/);
  // The dripping connection still holds its client's one place: another is reset at accept.
  const second = connect({ port: server.port, host: '127.0.0.1' });
  t.after(() => second.destroy());
  const refusal = await Promise.race([
    new Promise<string>((resolve) =>
      second.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error')),
    ),
    sleep(2_000).then(() => 'still open'),
  ]);
  assert.equal(refusal, 'ECONNRESET');
  const { at } = await slow.ended;
  clearInterval(drip);
  const heldMs = at - answeredAt;
  assert.ok(heldMs >= timeoutMs - 100, `held ${heldMs} ms after the answer`);
  assert.ok(heldMs <= timeoutMs + 1_000, `cut ${heldMs} ms after the answer`);
  // The place is free again.
  await sleep(100);
  const again = await open(t, server.port);
  again.socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
  await once(again.socket, 'data');
  assert.match(again.received(), /^HTTP\/1\.1 200 /);
});

test('a request timeout while the body is read after the answer adds nothing to that answer', {
  timeout: 20_000,
}, async (t) => {
  const server = await startServer(t, {
    requestTimeoutMs: 1_000,
    headersTimeoutMs: 1_000,
    connectionsCheckingIntervalMs: 100,
    discardBounds: { maxBytes: 64 * MiB, timeoutMs: 5_000 },
  });
  const client = await open(t, server.port);
  client.socket.write('POST /nothing HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\nx');
  const started = Date.now();
  const { at } = await client.ended;
  assert.ok(at - started < 3_000, `closed ${at - started} ms after the request`);
  const answers = client.received().match(/HTTP\/1\.1 \d{3}/g);
  assert.deepEqual(answers, ['HTTP/1.1 404'], 'one answer, and no 408 after it');
});

test('answers to requests without a body are as before', { timeout: 20_000 }, async (t) => {
  const server = await startServer(t);
  const client = await open(t, server.port);
  client.socket.write(
    'GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /nothing HTTP/1.1\r\nHost: x\r\n\r\n',
  );
  const { how } = await client.ended;
  assert.equal(how, 'end');
  const answers = client.received().match(/HTTP\/1\.1 \d{3}|Connection: \S+/gi);
  assert.deepEqual(answers, [
    'HTTP/1.1 200',
    'Connection: keep-alive',
    'HTTP/1.1 404',
    'Connection: close',
  ]);
});
