/**
 * The HTTP flood scenario, against a real ferry (in-process, the test broker, the emulator):
 * one client (127.0.0.1) floods the public callbacks port with more connections than its
 * per-client share, reconnecting each one as it is closed, while another client (127.0.0.2)
 * posts status callbacks to the same port and probes health on the operations port the way
 * the kubelet does (a new connection each time, 2 s to answer), and a probe from the flooding
 * address itself reaches the operations port too. Loopback only; bounded in connections and
 * time. The short run is in `make test`, the long one in `make chaos`.
 */
import assert from 'node:assert/strict';
import { request } from 'node:http';
import type { TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { type FloodFigures, startFlood } from './connection-flood.ts';
import { startEmulator, startFerry, type TestFerry } from './ferry.ts';

export interface HttpFloodOptions {
  /** Connections the flooding client tries to hold at once. */
  readonly connections: number;
  readonly durationMs: number;
}

/** What one kind of request got during the flood. */
export interface RequestFigures {
  readonly sent: number;
  /** Answered with the expected status within the timeout. */
  readonly answered: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly maxMs: number;
  /** The first few failures: status (0: no answer in time) and what went wrong. */
  readonly failures: readonly string[];
}

export interface HttpFloodReport {
  readonly flood: FloodFigures;
  /** /healthz and /readyz on the operations port from the other client. */
  readonly probes: RequestFigures;
  /** /healthz on the operations port from the flooding client's own address. */
  readonly probesFromFlooder: RequestFigures;
  /** Status callbacks on the public port from the other client. */
  readonly callbacks: RequestFigures;
  /** ferry_http_connections_refused_total by `port reason`, read from /metrics afterwards. */
  readonly refused: Readonly<Record<string, number>>;
  /** The per-client cap the run had (FERRY_HTTP_MAX_CONNECTIONS_PER_CLIENT). */
  readonly perClientCap: number;
  /** Most connections ferry counted for the flooding client at once (sampled every 50 ms). */
  readonly mostHeld: number;
}

const TOKEN = 'flood-callback-token-9c2e';
const PER_CLIENT_CAP = 64;
/** The kubelet's probe timeout in deploy/k8s (timeoutSeconds: 2). */
const PROBE_TIMEOUT_MS = 2_000;
/**
 * A callback's: a gateway waits about this long (ferry's own FERRY_REQUEST_TIMEOUT_MS
 * default). Not the probes' 2 s: a connection to the flooded port may wait in the kernel's
 * accept queue behind the flood's, or have its SYN dropped once (1 s) when the queue is full.
 */
const CALLBACK_TIMEOUT_MS = 10_000;
const FLOODER = '127.0.0.1';
const OTHER_CLIENT = '127.0.0.2';

interface Outcome {
  readonly status: number;
  readonly ms: number;
  readonly error?: string;
}

/** One request on a connection of its own from `localAddress`; status 0 when it failed. */
function timedRequest(
  url: string,
  localAddress: string,
  timeoutMs: number,
  method: 'GET' | 'POST',
  body?: string,
): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const done = (status: number, error?: string) =>
      resolve({ status, ms: performance.now() - started, ...(error ? { error } : {}) });
    const req = request(url, {
      method,
      localAddress,
      agent: false,
      timeout: timeoutMs,
      headers: {
        connection: 'close',
        ...(body === undefined
          ? {}
          : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
      },
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on('error', (error) => done(0, error.message));
    req.on('response', (res) => {
      res.resume();
      res.on('end', () => done(res.statusCode ?? 0));
      res.on('error', (error) => done(0, error.message));
    });
    req.end(body);
  });
}

/** Repeats `send` every `everyMs` until `stop.stopped`; resolves with every outcome. */
async function repeat(
  everyMs: number,
  stop: { stopped: boolean },
  send: (n: number) => Promise<Outcome>,
): Promise<Outcome[]> {
  const outcomes: Promise<Outcome>[] = [];
  for (let n = 0; !stop.stopped; n += 1) {
    outcomes.push(send(n));
    await sleep(everyMs);
  }
  return Promise.all(outcomes);
}

function figures(
  outcomes: readonly Outcome[],
  expected: number,
  timeoutMs: number,
): RequestFigures {
  const ms = outcomes.map((o) => o.ms).sort((a, b) => a - b);
  const at = (q: number) => Math.round(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))] ?? 0);
  const failed = outcomes.filter((o) => o.status !== expected || o.ms > timeoutMs);
  return {
    sent: outcomes.length,
    answered: outcomes.length - failed.length,
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    maxMs: Math.round(ms.at(-1) ?? 0),
    failures: failed
      .slice(0, 5)
      .map((o) => `${o.status} after ${Math.round(o.ms)} ms ${o.error ?? ''}`),
  };
}

/** `port reason` → value of ferry_http_connections_refused_total. */
async function refusedCounts(ferry: TestFerry): Promise<Record<string, number>> {
  const text = await (await fetch(`${ferry.daemon.ops.url}/metrics`)).text();
  const counts: Record<string, number> = {};
  for (const match of text.matchAll(
    /^ferry_http_connections_refused_total\{port="(\w+)",reason="(\w+)"\} (\S+)$/gm,
  )) {
    counts[`${match[1]} ${match[2]}`] = Number(match[3]);
  }
  return counts;
}

/** Runs the scenario once; the caller judges the report. */
export async function runHttpFlood(
  t: TestContext,
  options: HttpFloodOptions,
): Promise<HttpFloodReport> {
  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator, {
    FERRY_CALLBACK_TOKEN: TOKEN,
    FERRY_HTTP_MAX_CONNECTIONS_PER_CLIENT: String(PER_CLIENT_CAP),
  });
  const publicUrl = ferry.daemon.http.url;
  const opsUrl = ferry.daemon.ops.url;
  const stop = { stopped: false };
  const flood = startFlood({
    host: '127.0.0.1',
    port: ferry.daemon.http.port,
    localAddress: FLOODER,
    connections: options.connections,
    durationMs: options.durationMs,
  });
  // Let the flood take hold before measuring.
  await sleep(Math.min(1_000, options.durationMs / 4));
  const callback = (n: number) =>
    JSON.stringify({
      success: true,
      id: `flood-${n}`,
      status: 'DELIVERED',
      updated: '2024-05-01T10:00:00+00:00',
    });
  let mostHeld = 0;
  const sampler = setInterval(() => {
    mostHeld = Math.max(mostHeld, ferry.daemon.http.connectionsOf(FLOODER) ?? 0);
  }, 50);
  const loops = Promise.all([
    repeat(200, stop, (n) =>
      timedRequest(
        `${opsUrl}/${n % 2 === 0 ? 'healthz' : 'readyz'}`,
        OTHER_CLIENT,
        PROBE_TIMEOUT_MS,
        'GET',
      ),
    ),
    repeat(500, stop, () => timedRequest(`${opsUrl}/healthz`, FLOODER, PROBE_TIMEOUT_MS, 'GET')),
    repeat(100, stop, (n) =>
      timedRequest(
        `${publicUrl}/callbacks/${TOKEN}`,
        OTHER_CLIENT,
        CALLBACK_TIMEOUT_MS,
        'POST',
        callback(n),
      ),
    ),
  ]);
  const floodFigures = await flood;
  stop.stopped = true;
  clearInterval(sampler);
  const [probes, fromFlooder, callbacks] = await loops;
  return {
    flood: floodFigures,
    probes: figures(probes, 200, PROBE_TIMEOUT_MS),
    probesFromFlooder: figures(fromFlooder, 200, PROBE_TIMEOUT_MS),
    callbacks: figures(callbacks, 200, CALLBACK_TIMEOUT_MS),
    refused: await refusedCounts(ferry),
    perClientCap: PER_CLIENT_CAP,
    mostHeld,
  };
}

/**
 * The flood held off: every probe and every callback of the other client answered in time,
 * the flooding client held no more than its share, and what was refused was refused for it
 * (never at the port's cap, never on the operations port).
 */
export function assertFloodHeldOff(report: HttpFloodReport, durationMs: number): void {
  const detail = JSON.stringify(report, null, 2);
  for (const [name, kind, every] of [
    ['probes', report.probes, 200],
    ['probes from the flooding address', report.probesFromFlooder, 500],
    ['callbacks', report.callbacks, 100],
  ] as const) {
    assert.ok(kind.sent >= (durationMs / every) * 0.5, `${name}: enough were sent\n${detail}`);
    assert.equal(kind.answered, kind.sent, `${name}: every one answered in time\n${detail}`);
  }
  assert.ok(report.flood.opened > report.perClientCap, `the flood got going\n${detail}`);
  assert.ok(
    report.mostHeld > 0 && report.mostHeld <= report.perClientCap,
    `the flooding client held at most its share\n${detail}`,
  );
  assert.ok((report.refused['http per_client'] ?? 0) > 0, `refusals are counted\n${detail}`);
  assert.deepEqual(
    [report.refused['http global'], report.refused['ops per_client'], report.refused['ops global']],
    [0, 0, 0],
    detail,
  );
}
