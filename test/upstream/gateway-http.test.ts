/**
 * The gateway's HTTP edge against a server that holds its answer: a request past its
 * timeout ends as a transport timeout, one its caller aborts ends as aborted, and an
 * answered request leaves no timer behind (the process could exit at once).
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import { test } from 'node:test';
import { FerryError } from '../../src/errors.ts';
import { mayHaveReachedGateway } from '../../src/upstream/classify-error.ts';
import { GatewayHttp } from '../../src/upstream/gateway-http.ts';

async function holdingServer(t: import('node:test').TestContext) {
  const held: ServerResponse[] = [];
  const server = createServer((request, response) => {
    request.resume();
    if (request.url?.includes('hold')) held.push(response);
    else response.end('{"success":true,"data":[]}');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.after(() => {
    for (const response of held) response.destroy();
    server.closeAllConnections();
    server.close();
  });
  return `http://127.0.0.1:${(server.address() as { port: number }).port}`;
}

test('past its timeout a request is a transport timeout; aborted by its caller it is aborted', async (t) => {
  const base = await holdingServer(t);
  const held = new GatewayHttp({ syncBaseUrl: `${base}/hold`, requestTimeoutMs: 200 });
  t.after(() => held.destroy());
  const timedOut = await held.post('sync', '{}').catch((error: unknown) => error);
  assert.ok(timedOut instanceof FerryError);
  assert.equal(timedOut.code, 'transport');
  assert.match(timedOut.message, /timed out: no answer within 200 ms/);

  const caller = new AbortController();
  const aborted = held.post('sync', '{}', caller.signal).catch((error: unknown) => error);
  setTimeout(() => caller.abort(), 50);
  const error = await aborted;
  assert.ok(error instanceof FerryError);
  assert.equal(error.code, 'aborted');
});

test('an answered request leaves no timer and no listener on its caller signal', async (t) => {
  const base = await holdingServer(t);
  const http = new GatewayHttp({ syncBaseUrl: base, requestTimeoutMs: 60_000 });
  t.after(() => http.close());
  const caller = new AbortController();
  let listeners = 0;
  const add = caller.signal.addEventListener.bind(caller.signal);
  const remove = caller.signal.removeEventListener.bind(caller.signal);
  caller.signal.addEventListener = ((...args: Parameters<typeof add>) => {
    listeners += 1;
    add(...args);
  }) as typeof add;
  caller.signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
    listeners -= 1;
    remove(...args);
  }) as typeof remove;
  const before = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  const answer = await http.post('sync', '{}', caller.signal);
  assert.equal(answer.body, '{"success":true,"data":[]}');
  assert.equal(listeners, 0, 'the listener on the caller signal is removed');
  const after = process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  assert.ok(after <= before, `timers before ${before}, after ${after}`);
});

test('after close no request starts: it fails as a transport failure that never left', async (t) => {
  const base = await holdingServer(t);
  const http = new GatewayHttp({ syncBaseUrl: base, requestTimeoutMs: 5_000 });
  assert.equal((await http.post('sync', '{}')).body, '{"success":true,"data":[]}');
  await http.close();
  const error = await http.post('sync', '{}').catch((failure: unknown) => failure);
  assert.ok(error instanceof FerryError);
  assert.equal(error.code, 'transport');
  assert.equal(mayHaveReachedGateway(error), false);
});
