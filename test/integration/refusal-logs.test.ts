/**
 * Refused requests cannot flood ferry's log. A real ferry process (its stdout is the log)
 * gets 10,000 callbacks with a wrong token from a bounded-concurrency client and a few
 * from curl, then a few hundred admin calls from grpcurl without a token or with a wrong
 * one. Each kind writes at most DEFAULT_LINES_PER_INTERVAL lines per interval and, at the
 * interval's end or at shutdown, one summary counting the rest; /metrics counts every
 * refusal (`ferry_callbacks_total{outcome="unauthorized"}`,
 * `ferry_admin_calls_refused_total{reason}`).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { request } from 'node:http';
import { type TestContext, test } from 'node:test';
import { promisify } from 'node:util';
import {
  DEFAULT_LINES_PER_INTERVAL,
  DEFAULT_SAMPLE_INTERVAL_MS,
  SUPPRESSED_MESSAGE,
} from '../../src/observability/log-sampler.ts';
import { findTool } from '../deploy/external-tools.ts';
import { processEnv, startEmulator, testTopics } from '../helpers/ferry.ts';
import { type FerryProcess, spawnFerry, waitForLog } from '../helpers/ferry-process.ts';

const execFileAsync = promisify(execFile);

const CALLBACK_TOKEN = 'callback-token-3f9a1c';
const ADMIN_TOKEN = 'admin-token-8d27e4';
const WRONG_TOKEN_LINE = 'A status callback carried a wrong token.';
const ADMIN_FAILED_LINE = 'admin call failed';

const CALLBACKS = 10_000;
const CURL_CALLBACKS = 5;
const CALLBACK_CONCURRENCY = 32;
const GRPCURL_CALLS = 300;
const GRPCURL_CONCURRENCY = 8;

interface Running {
  readonly ferry: FerryProcess;
  /** The callbacks' port. */
  readonly httpPort: number;
  /** The port that serves /metrics: an operations port of its own when ferry has one. */
  readonly metricsPort: number;
  readonly grpcPort: number;
}

async function startLoggingFerry(t: TestContext): Promise<Running> {
  const emulator = await startEmulator(t);
  const topics = testTopics();
  const ferry = spawnFerry(t, {
    ...processEnv(topics, emulator),
    FERRY_TOPIC_PARTITIONS: '1',
    FERRY_CALLBACK_TOKEN: CALLBACK_TOKEN,
    FERRY_ADMIN_TOKEN: ADMIN_TOKEN,
    FERRY_ADMIN_LOOPBACK_ONLY: 'false',
    FERRY_OPS_HOST: '127.0.0.1',
    FERRY_OPS_PORT: '0',
  });
  await waitForLog(ferry, 'ferry is running', 90_000);
  const running = lines(ferry, 'ferry is running')[0] ?? {};
  const httpPort = Number(running.httpPort);
  return {
    ferry,
    httpPort,
    metricsPort: running.opsPort === undefined ? httpPort : Number(running.opsPort),
    grpcPort: Number(running.grpcPort),
  };
}

/** The process's log lines whose `msg` is `message`. */
function lines(ferry: FerryProcess, message: string): Record<string, unknown>[] {
  return ferry
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes(`"msg":"${message}"`))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/** Lines of `kind` allowed in `elapsedMs`: the limit in each interval begun, and its summary. */
function allowedLines(elapsedMs: number): { lines: number; summaries: number } {
  const intervals = Math.floor(elapsedMs / DEFAULT_SAMPLE_INTERVAL_MS) + 1;
  return { lines: DEFAULT_LINES_PER_INTERVAL * intervals, summaries: intervals };
}

/** Stops the process (SIGTERM, a clean drain) and sums the suppressed lines of `kind` it reported. */
async function suppressedAtExit(ferry: FerryProcess, kind: string): Promise<number> {
  ferry.child.kill('SIGTERM');
  assert.equal(await ferry.exited(), 0, ferry.output());
  return lines(ferry, SUPPRESSED_MESSAGE)
    .filter((line) => line.kind === kind)
    .reduce((sum, line) => sum + Number(line.suppressed), 0);
}

async function metric(port: number, series: string): Promise<number> {
  const response = await fetch(`http://127.0.0.1:${port}/metrics`);
  const text = await response.text();
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  assert.ok(line, `${series} is exported`);
  return Number(line.slice(series.length + 1));
}

/** Runs `fn` `count` times, at most `limit` at once. */
async function times(count: number, limit: number, fn: (index: number) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < count) await fn(next++);
    }),
  );
}

/** POSTs a receipt to a callback URL with a wrong token; resolves with the HTTP status. */
function postWrongToken(port: number, index: number): Promise<number> {
  const body = JSON.stringify({ id: index, status: 'DELIVERED' });
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: '127.0.0.1',
        port,
        method: 'POST',
        path: `/callbacks/wrong-${index % 7}`,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
        agent: false,
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

test(`${CALLBACKS} callbacks with a wrong token: all counted, at most ${DEFAULT_LINES_PER_INTERVAL} lines a minute and a summary`, {
  timeout: 180_000,
}, async (t) => {
  const { ferry, httpPort, metricsPort } = await startLoggingFerry(t);
  const unauthorized = 'ferry_callbacks_total{status="none",outcome="unauthorized"}';
  assert.equal(await metric(metricsPort, unauthorized), 0);

  const started = performance.now();
  const statuses = new Map<number, number>();
  await times(CALLBACKS, CALLBACK_CONCURRENCY, async (index) => {
    const code = await postWrongToken(httpPort, index);
    statuses.set(code, (statuses.get(code) ?? 0) + 1);
  });
  // A client ferry did not write: curl, with a form body, as scanners post.
  for (let i = 0; i < CURL_CALLBACKS; i++) {
    const { stdout } = await execFileAsync(
      findTool('curl'),
      ['-sS', '-o', '/dev/null', '-w', '%{http_code}', '-d', 'id=1&status=DELIVERED'].concat(
        `http://127.0.0.1:${httpPort}/callbacks/curl-${i}`,
      ),
      { timeout: 30_000 },
    );
    statuses.set(Number(stdout), (statuses.get(Number(stdout)) ?? 0) + 1);
  }
  const elapsedMs = performance.now() - started;
  const total = CALLBACKS + CURL_CALLBACKS;
  assert.deepEqual([...statuses], [[404, total]]);
  assert.equal(await metric(metricsPort, unauthorized), total);

  const allowed = allowedLines(elapsedMs);
  const written = lines(ferry, WRONG_TOKEN_LINE).length;
  t.diagnostic(`${total} wrong-token callbacks in ${Math.round(elapsedMs)} ms: ${written} lines`);
  assert.ok(written >= 1 && written <= allowed.lines, `${written} lines, ${allowed.lines} allowed`);

  const suppressed = await suppressedAtExit(ferry, 'callback_wrong_token');
  const summaries = lines(ferry, SUPPRESSED_MESSAGE).filter(
    (line) => line.kind === 'callback_wrong_token',
  );
  t.diagnostic(`${summaries.length} summary lines, ${suppressed} lines suppressed`);
  assert.ok(summaries.length >= 1 && summaries.length <= allowed.summaries);
  assert.equal(written + suppressed, total, 'every refusal is a line or counted in a summary');
});

test(`${GRPCURL_CALLS} admin calls from grpcurl without the token: all counted, the log bounded`, {
  timeout: 180_000,
}, async (t) => {
  const { ferry, metricsPort, grpcPort } = await startLoggingFerry(t);
  const grpcurl = findTool('grpcurl');
  const started = performance.now();
  const outcomes = new Map<string, number>();
  await times(GRPCURL_CALLS, GRPCURL_CONCURRENCY, async (index) => {
    // Half without metadata, half with a wrong bearer token; reflection needs none.
    const header = index % 2 === 0 ? [] : ['-H', 'authorization: Bearer not-the-token'];
    const result = await execFileAsync(
      grpcurl,
      [
        ...['-plaintext', '-max-time', '20', ...header, '-d', '{}'],
        `127.0.0.1:${grpcPort}`,
        'ferry.admin.v1.AdminService/GetBalance',
      ],
      { timeout: 30_000 },
    ).then(
      () => 'OK',
      (error: { stderr?: string }) => /Code: (\w+)/.exec(error.stderr ?? '')?.[1] ?? 'none',
    );
    outcomes.set(result, (outcomes.get(result) ?? 0) + 1);
  });
  const elapsedMs = performance.now() - started;
  assert.deepEqual([...outcomes], [['Unauthenticated', GRPCURL_CALLS]]);
  const refused = 'ferry_admin_calls_refused_total';
  assert.equal(await metric(metricsPort, `${refused}{reason="missing_token"}`), GRPCURL_CALLS / 2);
  assert.equal(await metric(metricsPort, `${refused}{reason="wrong_token"}`), GRPCURL_CALLS / 2);

  const allowed = allowedLines(elapsedMs);
  const written = lines(ferry, ADMIN_FAILED_LINE).length;
  t.diagnostic(`${GRPCURL_CALLS} grpcurl calls in ${Math.round(elapsedMs)} ms: ${written} lines`);
  assert.ok(written >= 1 && written <= allowed.lines, `${written} lines, ${allowed.lines} allowed`);

  const kind = 'admin_call_failed:UNAUTHENTICATED';
  const suppressed = await suppressedAtExit(ferry, kind);
  const summaries = lines(ferry, SUPPRESSED_MESSAGE).filter((line) => line.kind === kind);
  t.diagnostic(`${summaries.length} summary lines, ${suppressed} lines suppressed`);
  assert.ok(summaries.length >= 1 && summaries.length <= allowed.summaries);
  assert.equal(written + suppressed, GRPCURL_CALLS);
});
