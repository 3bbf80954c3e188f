/**
 * What the gateway's HTTP edge says about a failed request's reach, against real sockets:
 * a failure before the connection exists (refused, a TLS certificate refused, a TLS
 * handshake that never ends) proves the request never left; one after it (a reset once
 * the request is read, no answer, an answer too long) may have been acted on. The
 * exactly-once logic looks a command up before sending it again only in the second case.
 * Also: HTTPS to a gateway whose certificate the process trusts (NODE_EXTRA_CA_CERTS,
 * in a child process, as an operator would set it) is answered.
 */
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createServer as createTcpServer, type Server, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { FerryError } from '../../src/errors.ts';
import { mayHaveReachedGateway } from '../../src/upstream/classify-error.ts';
import { GatewayHttp } from '../../src/upstream/gateway-http.ts';

async function listening(t: import('node:test').TestContext, server: Server): Promise<number> {
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    for (const socket of sockets) socket.destroy();
    server.close();
  });
  return (server.address() as { port: number }).port;
}

async function failureOf(http: GatewayHttp): Promise<FerryError> {
  const error = await http.post('sync', '{"operations":[]}').then(
    () => assert.fail('the request was answered'),
    (failure: unknown) => failure,
  );
  assert.ok(error instanceof FerryError, String(error));
  assert.equal(error.code, 'transport');
  return error;
}

function client(t: import('node:test').TestContext, base: string, timeoutMs = 2_000) {
  const http = new GatewayHttp({ syncBaseUrl: base, requestTimeoutMs: timeoutMs });
  t.after(() => http.destroy());
  return http;
}

/** A self-signed certificate for 127.0.0.1, made with openssl. */
function certificate(t: import('node:test').TestContext): {
  key: string;
  cert: string;
  file: string;
} {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-gateway-tls-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
      '-keyout',
      'key.pem',
      '-out',
      'cert.pem',
    ],
    { cwd: dir, stdio: 'pipe' },
  );
  return {
    key: readFileSync(join(dir, 'key.pem'), 'utf8'),
    cert: readFileSync(join(dir, 'cert.pem'), 'utf8'),
    file: join(dir, 'cert.pem'),
  };
}

test('a refused connection never reached the gateway', async (t) => {
  const server = createTcpServer();
  const port = await listening(t, server);
  await new Promise((resolve) => server.close(resolve));
  const error = await failureOf(client(t, `http://127.0.0.1:${port}`));
  assert.match(error.message, /^gateway unreachable \(ECONNREFUSED\)/);
  assert.equal(mayHaveReachedGateway(error), false);
});

test('a TLS handshake that never ends, or a certificate refused, never reached the gateway', async (t) => {
  // Accepts TCP and says nothing: the TLS handshake waits until the request times out.
  const silent = await listening(
    t,
    createTcpServer(() => {}),
  );
  const stalled = await failureOf(client(t, `https://127.0.0.1:${silent}`, 300));
  assert.match(stalled.message, /^gateway unreachable \(no connection\): no answer within 300 ms/);
  assert.equal(mayHaveReachedGateway(stalled), false);

  const { key, cert } = certificate(t);
  const untrusted = createHttpsServer({ key, cert }, (_request, response) => response.end('{}'));
  const port = await listening(t, untrusted);
  const refused = await failureOf(client(t, `https://127.0.0.1:${port}`));
  assert.match(refused.message, /self-signed certificate/);
  assert.equal(mayHaveReachedGateway(refused), false);
});

test('a reset after the request was read, a held answer or one too long may have been acted on', async (t) => {
  const resetting = createTcpServer((socket) => {
    socket.once('data', () => socket.resetAndDestroy());
  });
  const reset = await failureOf(client(t, `http://127.0.0.1:${await listening(t, resetting)}`));
  assert.match(reset.message, /^gateway unreachable \(ECONNRESET\)/);
  assert.equal(mayHaveReachedGateway(reset), true);

  const holding = createHttpServer((request) => request.resume());
  const held = await failureOf(client(t, `http://127.0.0.1:${await listening(t, holding)}`, 300));
  assert.match(held.message, /^gateway request timed out: no answer within 300 ms/);
  assert.equal(mayHaveReachedGateway(held), true);

  // A kept-alive connection that already carried an answer counts as connected.
  let answered = 0;
  const onceThenHold = createHttpServer((request, response) => {
    request.resume();
    answered += 1;
    if (answered === 1) response.end('{"success":true}');
  });
  const again = client(t, `http://127.0.0.1:${await listening(t, onceThenHold)}`, 300);
  assert.equal((await again.post('sync', '{}')).body, '{"success":true}');
  const reused = await failureOf(again);
  assert.match(reused.message, /timed out/);
  assert.equal(mayHaveReachedGateway(reused), true);

  const endless = createHttpServer((request, response) => {
    request.resume();
    response.writeHead(200, { 'content-type': 'application/json' });
    const chunk = Buffer.alloc(1024 * 1024, 0x20);
    const write = () => {
      while (response.write(chunk)) {}
      response.once('drain', write);
    };
    write();
  });
  const long = await failureOf(
    client(t, `http://127.0.0.1:${await listening(t, endless)}`, 20_000),
  );
  assert.match(long.message, /longer than 67108864 bytes/);
  assert.equal(mayHaveReachedGateway(long), true);
});

test('HTTPS to a gateway whose certificate the process trusts is answered; a request that queued for its connection counts as sent once out', async (t) => {
  const { key, cert, file } = certificate(t);
  let requests = 0;
  const server = createHttpsServer({ key, cert }, (request, response) => {
    request.resume();
    requests += 1;
    // The first is answered; the second, sent over the same connection after it, is held.
    if (requests === 1)
      request.on('end', () => setTimeout(() => response.end('{"success":true,"data":[]}'), 100));
  });
  const port = await listening(t, server);
  const script = `
    import { GatewayHttp } from ${JSON.stringify(new URL('../../src/upstream/gateway-http.ts', import.meta.url).href)};
    import { mayHaveReachedGateway } from ${JSON.stringify(new URL('../../src/upstream/classify-error.ts', import.meta.url).href)};
    const http = new GatewayHttp({ syncBaseUrl: 'https://127.0.0.1:${port}/', connections: 1, requestTimeoutMs: 1000 });
    const [first, second] = await Promise.allSettled([http.post('sync', '{}'), http.post('sync', '{}')]);
    await http.destroy();
    process.stdout.write(JSON.stringify({
      first: first.status === 'fulfilled' ? first.value.body : String(first.reason),
      second: second.status === 'rejected' ? second.reason.message : 'answered',
      secondMayHaveReached: second.status === 'rejected' ? mayHaveReachedGateway(second.reason) : null,
    }));
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '--eval', script],
    { env: { ...process.env, NODE_EXTRA_CA_CERTS: file }, timeout: 20_000 },
  );
  assert.deepEqual(JSON.parse(stdout), {
    first: '{"success":true,"data":[]}',
    second: 'gateway request timed out: no answer within 1000 ms',
    secondMayHaveReached: true,
  });
  assert.equal(requests, 2, 'the second request reached the server');
});
