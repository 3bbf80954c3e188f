/**
 * `ferry_commands_in_doubt` as the dispatcher keeps it: a takeover's lookups count while
 * they are asked, a command handed over in doubt counts until its lookup settles it, and
 * nothing is left counted once every command has its outcome. Real HTTP to the emulator.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { createMetrics, type FerryMetrics } from '../../src/observability/metrics.ts';
import { Dispatcher, type Outbound, type SendOutcome } from '../../src/pipeline/dispatcher.ts';
import { SendGate } from '../../src/pipeline/send-gate.ts';
import { GatewayClient } from '../../src/upstream/gateway-client.ts';
import { GatewayHttp } from '../../src/upstream/gateway-http.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { startEmulator, TEST_API_KEY, testLogger } from '../helpers/ferry.ts';

async function dispatcherFor(t: TestContext, latencyMs: number) {
  const emulator = await startEmulator(t, { knobs: { latencyMs } });
  const http = new GatewayHttp({ syncBaseUrl: emulator.url, requestTimeoutMs: 5_000 });
  t.after(() => http.close());
  const metrics = createMetrics();
  const dispatcher = new Dispatcher({
    gateway: new GatewayClient({ http, apiKey: TEST_API_KEY }),
    gate: new SendGate(),
    logger: testLogger(),
    metrics,
    concurrency: 2,
    rateLimitRps: 0,
    maxAttempts: 3,
    retryBaseMs: 10,
    retryMaxMs: 20,
    lookupDelayMs: 10,
    onAccessDenied: () => undefined,
  });
  return { dispatcher, metrics, emulator };
}

async function inDoubt(metrics: FerryMetrics): Promise<number | undefined> {
  return (await metrics.commandsInDoubt.get()).values[0]?.value;
}

function item(id: number, inDoubtAtStart: boolean): [Outbound, Promise<SendOutcome>] {
  let settle: (outcome: SendOutcome) => void = () => undefined;
  const settled = new Promise<SendOutcome>((resolve) => {
    settle = resolve;
  });
  return [
    {
      json: JSON.stringify(smsOperation(id)),
      id,
      type: 'sms',
      reconcilable: true,
      inDoubt: inDoubtAtStart,
      isCurrent: () => true,
      settle,
    },
    settled,
  ];
}

test('a takeover lookup counts its commands in doubt while it is asked', async (t) => {
  const { dispatcher, metrics } = await dispatcherFor(t, 400);
  assert.equal(await inDoubt(metrics), 0);
  const asked = dispatcher.lookUp([
    { id: 501, type: 'sms' },
    { id: 502, type: 'sms' },
    { id: 503, type: 'sms' },
  ]);
  await sleep(100);
  assert.equal(await inDoubt(metrics), 3);
  const answers = await asked;
  assert.deepEqual(
    answers?.map((answer) => answer.kind),
    ['unsent', 'unsent', 'unsent'],
  );
  assert.equal(await inDoubt(metrics), 0);
});

test('a command handed over in doubt counts until its lookup proves it unsent', async (t) => {
  const { dispatcher, metrics, emulator } = await dispatcherFor(t, 400);
  const [doubtful, doubtfulOutcome] = item(601, true);
  const [fresh, freshOutcome] = item(602, false);
  dispatcher.dispatch({ transport: 'sync', items: [doubtful, fresh] });
  await sleep(100);
  assert.equal(await inDoubt(metrics), 1, 'only the command that may have been sent');
  const outcomes = await Promise.all([doubtfulOutcome, freshOutcome]);
  assert.deepEqual(
    outcomes.map((outcome) => outcome.kind),
    ['item', 'item'],
  );
  assert.equal(await inDoubt(metrics), 0);
  assert.equal(emulator.stats().sendsById['601'], 1, 'looked up, not found, sent once');
});
