/**
 * `Retry-After` on a 429 or 503 holds every send of the replica, not only the envelope
 * that got it: measured by when the next requests reach the gateway, against the
 * emulator (seconds) and against a gateway that is not ferry's (Python's http.server,
 * an HTTP-date).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Emulator } from '../../src/emulator/index.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { Dispatcher } from '../../src/pipeline/dispatcher.ts';
import { SendGate } from '../../src/pipeline/send-gate.ts';
import { GatewayClient } from '../../src/upstream/gateway-client.ts';
import { GatewayHttp } from '../../src/upstream/gateway-http.ts';
import { dispatcherAgainstEmulator, outboundSms } from '../helpers/dispatcher.ts';
import { TEST_API_KEY, testLogger } from '../helpers/ferry.ts';

/** Polls the emulator's request count; resolves with when it first passed `count`. */
async function requestAfter(emulator: Emulator, count: number, timeoutMs: number): Promise<number> {
  const deadline = performance.now() + timeoutMs;
  while (performance.now() < deadline) {
    if (emulator.stats().requests > count) return performance.now();
    await sleep(2);
  }
  throw new Error(`no request past ${count} within ${timeoutMs} ms`);
}

/**
 * Sends one envelope into a 429 asking for `retryAfterMs`, lifts the fault the moment it
 * is answered and sends a second envelope; returns the gap from the 429 to the next
 * request that reached the emulator, and both outcomes.
 */
async function gapAfterThrottle(
  t: TestContext,
  { retryAfterMs, retryAfterMaxMs }: { retryAfterMs: number; retryAfterMaxMs: number },
) {
  const { dispatcher, emulator } = await dispatcherAgainstEmulator(t, { retryAfterMaxMs });
  emulator.setKnobs({ http429Rate: 1, retryAfterMs });
  const [first, firstOutcome] = outboundSms(801);
  dispatcher.dispatch({ transport: 'sync', items: [first] });
  const throttledAt = await requestAfter(emulator, 0, 5_000);
  emulator.setKnobs({ http429Rate: 0 });
  // Another envelope, which never got a 429 itself, sent once the first one's is in.
  while (retryAfterMaxMs > 0 && dispatcher.retryAfterRemainingMs === 0) await sleep(2);
  const [second, secondOutcome] = outboundSms(802);
  dispatcher.dispatch({ transport: 'sync', items: [second] });
  const nextAt = await requestAfter(emulator, 1, 10_000);
  const outcomes = await Promise.all([firstOutcome, secondOutcome]);
  t.diagnostic(`next request ${Math.round(nextAt - throttledAt)} ms after the 429`);
  return { gapMs: nextAt - throttledAt, outcomes, emulator, dispatcher };
}

test('a 429 with Retry-After holds every send of the replica that long, then both go out once', async (t) => {
  const { gapMs, outcomes, emulator } = await gapAfterThrottle(t, {
    retryAfterMs: 2_000,
    retryAfterMaxMs: 60_000,
  });
  // Without the header the retry would follow within 20 ms (retryMaxMs of the helper).
  assert.ok(gapMs >= 1_950, `next request ${Math.round(gapMs)} ms after the 429`);
  assert.ok(gapMs < 3_500, `next request ${Math.round(gapMs)} ms after the 429`);
  assert.deepEqual(
    outcomes.map((outcome) => [outcome.kind, outcome.kind === 'item' && outcome.item.success]),
    [
      ['item', true],
      ['item', true],
    ],
  );
  assert.deepEqual(emulator.stats().sendsById, { '801': 1, '802': 1 });
});

test('a Retry-After past FERRY_RETRY_AFTER_MAX_MS holds only that long', async (t) => {
  const { gapMs, dispatcher } = await gapAfterThrottle(t, {
    retryAfterMs: 30_000,
    retryAfterMaxMs: 1_000,
  });
  assert.ok(gapMs >= 950 && gapMs < 2_500, `next request ${Math.round(gapMs)} ms after the 429`);
  assert.equal(dispatcher.retryAfterRemainingMs, 0);
});

test('FERRY_RETRY_AFTER_MAX_MS=0 ignores Retry-After: the retry follows the backoff', async (t) => {
  const { gapMs } = await gapAfterThrottle(t, { retryAfterMs: 2_000, retryAfterMaxMs: 0 });
  assert.ok(gapMs < 500, `next request ${Math.round(gapMs)} ms after the 429`);
});

interface GatewayLine {
  readonly at: number;
  readonly status: number;
  readonly retry_after: string | null;
}

/** Python's http.server as the gateway (test/upstream/python/throttling_gateway.py). */
async function pythonGateway(t: TestContext, throttled: number, retryAfterS: number) {
  const script = join(import.meta.dirname, '../upstream/python/throttling_gateway.py');
  const child = spawn('python3', ['-B', script, String(throttled), String(retryAfterS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  t.after(() => child.kill());
  const lines = createInterface({ input: child.stdout });
  const requests: GatewayLine[] = [];
  let port: string | undefined;
  const listening = new Promise<void>((resolve) => {
    lines.on('line', (line) => {
      if (port === undefined) {
        port = line.trim();
        resolve();
      } else requests.push(JSON.parse(line) as GatewayLine);
    });
  });
  await Promise.race([
    listening,
    once(child, 'exit').then(() => {
      throw new Error('python3 throttling_gateway.py exited');
    }),
  ]);
  return { url: `http://127.0.0.1:${port}`, requests };
}

test('an HTTP-date Retry-After from a foreign gateway (Python http.server, 503) holds the sends', async (t) => {
  const gateway = await pythonGateway(t, 1, 3);
  const http = new GatewayHttp({ syncBaseUrl: gateway.url, requestTimeoutMs: 2_000 });
  t.after(() => http.close());
  const dispatcher = new Dispatcher({
    gateway: new GatewayClient({ http, apiKey: TEST_API_KEY }),
    gate: new SendGate(),
    logger: testLogger(),
    metrics: createMetrics(),
    concurrency: 2,
    rateLimitRps: 0,
    maxAttempts: 3,
    retryBaseMs: 10,
    retryMaxMs: 20,
    retryAfterMaxMs: 60_000,
    lookupDelayMs: 10,
    onAccessDenied: () => undefined,
  });
  const [first, firstOutcome] = outboundSms(901);
  const [second, secondOutcome] = outboundSms(902);
  dispatcher.dispatch({ transport: 'sync', items: [first] });
  while (gateway.requests.length === 0) await sleep(5);
  dispatcher.dispatch({ transport: 'sync', items: [second] });
  const outcomes = await Promise.all([firstOutcome, secondOutcome]);
  assert.deepEqual(
    outcomes.map((outcome) => outcome.kind === 'item' && outcome.item.success),
    [true, true],
  );
  const [throttled, ...after] = gateway.requests;
  assert.equal(throttled?.status, 503);
  assert.match(String(throttled?.retry_after), /^\w{3}, \d\d \w{3} \d{4} [\d:]{8} GMT$/);
  // The date has whole seconds, so 3 s ahead is a wait of 2 to 3 s.
  const gapMs = ((after[0]?.at ?? 0) - (throttled?.at ?? 0)) * 1000;
  t.diagnostic(
    `Retry-After: ${throttled?.retry_after}; next request ${Math.round(gapMs)} ms later`,
  );
  assert.ok(gapMs >= 1_950 && gapMs < 4_500, `next request ${Math.round(gapMs)} ms after the 503`);
  assert.ok(
    after.every((request) => request.status === 200),
    'the lookup of 901 and both sends',
  );
});
