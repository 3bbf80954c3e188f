/**
 * Admin calls refused for their token cannot flood the log: anyone who reaches the port can
 * make them, so their `admin call failed` lines are rate-limited (log-sampler.ts), while
 * `ferry_admin_calls_refused_total{reason}` counts every one.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { status } from '@grpc/grpc-js';
import { AdminService } from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { GrpcClient } from '../../src/admin/grpc-client.ts';
import {
  DEFAULT_LINES_PER_INTERVAL,
  SUPPRESSED_MESSAGE,
} from '../../src/observability/log-sampler.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { jsonLineSink } from '../helpers/log-lines.ts';
import { startAdmin } from './admin-fixture.ts';

/** Calls without a token and with a wrong one; each half of it. */
const CALLS = 2_000;
const CONCURRENCY = 50;

test(`${CALLS} unauthenticated calls are all counted and logged in at most ${DEFAULT_LINES_PER_INTERVAL} lines and a summary`, async (t) => {
  const { destination, lines } = jsonLineSink();
  const metrics = createMetrics();
  const { server, address } = await startAdmin(t, {
    logger: createLogger({ level: 'info', destination }),
    metrics,
  });
  const anonymous = new GrpcClient(AdminService, { address });
  const wrong = new GrpcClient(AdminService, { address, token: 'not-the-admin-token' });
  t.after(() => {
    anonymous.close();
    wrong.close();
  });

  const codes = new Map<number, number>();
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CALLS) {
        const client = next++ % 2 === 0 ? anonymous : wrong;
        const code = await client.unary('getBalance', {}).then(
          () => status.OK,
          (error: { code: number }) => error.code,
        );
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
    }),
  );
  const elapsedMs = performance.now() - started;
  assert.deepEqual([...codes], [[status.UNAUTHENTICATED, CALLS]]);

  const refused = await metrics.registry.getSingleMetricAsString('ferry_admin_calls_refused_total');
  assert.match(refused, new RegExp(`reason="missing_token"} ${CALLS / 2}$`, 'm'));
  assert.match(refused, new RegExp(`reason="wrong_token"} ${CALLS / 2}$`, 'm'));

  const failed = () => lines.filter((line) => line.msg === 'admin call failed');
  // One interval per minute; a run this short fits one or two of them.
  const intervals = Math.floor(elapsedMs / 60_000) + 1;
  assert.ok(
    failed().length <= DEFAULT_LINES_PER_INTERVAL * intervals,
    `${failed().length} lines for ${CALLS} refused calls`,
  );
  assert.equal(failed()[0]?.code, status.UNAUTHENTICATED);

  // Stopping writes the summary of what was left out: together they account for every call.
  await server.stop(1000);
  const summaries = lines.filter((line) => line.msg === SUPPRESSED_MESSAGE);
  assert.ok(summaries.length >= 1 && summaries.length <= intervals);
  assert.equal(summaries[0]?.kind, 'admin_call_failed:UNAUTHENTICATED');
  const suppressed = summaries.reduce((sum, line) => sum + Number(line.suppressed), 0);
  assert.equal(failed().length + suppressed, CALLS);
});
