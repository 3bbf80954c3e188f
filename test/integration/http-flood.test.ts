/**
 * One client floods the public port with more connections than its share while another
 * posts callbacks and probes health: every probe and callback is answered (test/helpers/
 * http-flood.ts). A few seconds here; `make chaos` runs it for a minute with 1,100
 * connections (test/chaos/http-flood-check.ts).
 */
import { test } from 'node:test';
import { assertFloodHeldOff, runHttpFlood } from '../helpers/http-flood.ts';

const DURATION_MS = 4_000;

test('a client flooding the callbacks port holds its share only; health and other callbacks are answered', async (t) => {
  const report = await runHttpFlood(t, { connections: 1_100, durationMs: DURATION_MS });
  t.diagnostic(JSON.stringify(report));
  assertFloodHeldOff(report, DURATION_MS);
});
