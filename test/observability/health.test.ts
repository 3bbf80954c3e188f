import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { HttpServer } from '../../src/http/http-server.ts';
import { type HealthSource, registerOpsRoutes } from '../../src/observability/health.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';

const quiet = new Writable({ write: (_chunk, _encoding, done) => done() });

test('ops routes serve metrics, liveness and readiness from their sources', async (t) => {
  const metrics = createMetrics();
  metrics.commandsConsumed.inc({ transport: 'sync' }, 2);
  let state: { ready: boolean; reasons: string[] } = {
    ready: false,
    reasons: ['kafka: not connected', 'consumer: not running'],
  };
  let alive = true;
  const health: HealthSource = { live: () => alive, ready: () => state };
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: createLogger({ destination: quiet }),
  });
  registerOpsRoutes(server, { metrics, health });
  t.after(() => server.stop());
  await server.start();

  const scraped = await fetch(`${server.url}/metrics`);
  assert.equal(scraped.status, 200);
  assert.equal(scraped.headers.get('content-type'), metrics.registry.contentType);
  assert.match(await scraped.text(), /^ferry_commands_consumed_total\{transport="sync"\} 2$/m);

  assert.equal((await fetch(`${server.url}/healthz`)).status, 200);
  alive = false;
  assert.equal((await fetch(`${server.url}/healthz`)).status, 503);

  const notReady = await fetch(`${server.url}/readyz`);
  assert.equal(notReady.status, 503);
  assert.deepEqual(await notReady.json(), state);

  state = { ready: true, reasons: [] };
  const ready = await fetch(`${server.url}/readyz`);
  assert.equal(ready.status, 200);
  assert.deepEqual(await ready.json(), { ready: true, reasons: [] });
});

test('a health source that throws reads as not ready and not alive', async (t) => {
  const health: HealthSource = {
    live: () => {
      throw new Error('boom');
    },
    ready: () => {
      throw new Error('state unknown');
    },
  };
  const server = new HttpServer({
    host: '127.0.0.1',
    port: 0,
    logger: createLogger({ destination: quiet }),
  });
  registerOpsRoutes(server, { metrics: createMetrics(), health });
  t.after(() => server.stop());
  await server.start();
  assert.equal((await fetch(`${server.url}/healthz`)).status, 503);
  const readiness = await fetch(`${server.url}/readyz`);
  assert.equal(readiness.status, 503);
  assert.deepEqual(await readiness.json(), {
    ready: false,
    reasons: ['readiness check failed: state unknown'],
  });
});
