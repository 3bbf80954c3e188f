/**
 * A Dispatcher against a real emulator over HTTP, with small retry timings, for the
 * tests of what the dispatcher does with answers, lookups and abandoned sends.
 */
import type { TestContext } from 'node:test';
import type { Emulator } from '../../src/emulator/index.ts';
import { createMetrics, type FerryMetrics } from '../../src/observability/metrics.ts';
import { Dispatcher } from '../../src/pipeline/dispatcher.ts';
import { SendGate } from '../../src/pipeline/send-gate.ts';
import type { Outbound, SendOutcome } from '../../src/pipeline/send-outcome.ts';
import { GatewayClient } from '../../src/upstream/gateway-client.ts';
import { GatewayHttp } from '../../src/upstream/gateway-http.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { startEmulator, TEST_API_KEY, testLogger } from './ferry.ts';

export interface DispatcherSetup {
  readonly dispatcher: Dispatcher;
  readonly metrics: FerryMetrics;
  readonly emulator: Emulator;
}

export async function dispatcherAgainstEmulator(
  t: TestContext,
  {
    latencyMs = 0,
    requestTimeoutMs = 1_000,
    retryAfterMaxMs = 60_000,
  }: { latencyMs?: number; requestTimeoutMs?: number; retryAfterMaxMs?: number } = {},
): Promise<DispatcherSetup> {
  const emulator = await startEmulator(t, latencyMs > 0 ? { knobs: { latencyMs } } : {});
  const http = new GatewayHttp({ syncBaseUrl: emulator.url, requestTimeoutMs });
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
    retryAfterMaxMs,
    lookupDelayMs: 10,
    onAccessDenied: () => undefined,
  });
  return { dispatcher, metrics, emulator };
}

/** An SMS to dispatch, and the outcome its dispatch settles. */
export function outboundSms(
  id: number,
  {
    inDoubt = false,
    current = true,
    deadlineMs,
    reconcilable = true,
  }: { inDoubt?: boolean; current?: boolean; deadlineMs?: number; reconcilable?: boolean } = {},
): [Outbound, Promise<SendOutcome>] {
  let settle: (outcome: SendOutcome) => void = () => undefined;
  const settled = new Promise<SendOutcome>((resolve) => {
    settle = resolve;
  });
  const outbound: Outbound = {
    json: JSON.stringify(smsOperation(id)),
    id,
    type: 'sms',
    reconcilable,
    inDoubt,
    deadlineMs,
    isCurrent: () => current,
    settle,
  };
  return [outbound, settled];
}
