/**
 * The HTTP flood for a minute (make chaos): one client holds 1,100 connections on the public
 * port, more than the port's cap of 1,024, reconnecting each one as it is closed, as the
 * attacker seen against ferry did; another client's health probes and callbacks must all be
 * answered throughout (test/helpers/http-flood.ts). `make test` runs a short one
 * (test/integration/http-flood.test.ts).
 */
import { test } from 'node:test';
import { assertFloodHeldOff, runHttpFlood } from '../helpers/http-flood.ts';

const DURATION_MS = 60_000;

test('a minute of 1,100 connections from one client: health and other callbacks all answered', async (t) => {
  const report = await runHttpFlood(t, { connections: 1_100, durationMs: DURATION_MS });
  t.diagnostic(JSON.stringify(report));
  assertFloodHeldOff(report, DURATION_MS);
});
