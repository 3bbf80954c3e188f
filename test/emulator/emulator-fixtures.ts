/**
 * Test fixtures for the emulator's tests: a started emulator, an HTTP client and a
 * status-callback receiver, each on 127.0.0.1 with port 0 and torn down by `t.after`.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TestContext } from 'node:test';
import { Agent, request } from 'undici';
import { createEmulator, type Emulator, type EmulatorOptions } from '../../src/emulator/index.ts';

export const API_KEY = 'test-key';
export const PHONE = 380501234567;

/** Starts an emulator with the test key (and overrides), stopped after the test. */
export async function startEmulator(
  t: TestContext,
  overrides: Partial<EmulatorOptions> = {},
): Promise<Emulator> {
  const emulator = createEmulator({ apiKey: API_KEY, seed: 7, ...overrides });
  await emulator.start();
  t.after(() => emulator.stop());
  return emulator;
}

export interface HttpAnswer {
  readonly status: number;
  readonly headers: IncomingHttpHeaders | Record<string, string | string[] | undefined>;
  readonly text: string;
}

export interface HttpClient {
  /** POSTs `body` (a value is serialized as JSON) with `Content-Type: application/json` unless told otherwise. */
  post(
    url: string,
    body: unknown,
    options?: { contentType?: string | null; timeoutMs?: number },
  ): Promise<HttpAnswer>;
  get(url: string): Promise<HttpAnswer>;
  /** POSTs an envelope `{auth, data}` to the sync endpoint and returns the parsed answer. */
  sync(baseUrl: string, data: unknown[], auth?: string): Promise<GatewayAnswer>;
  /** POSTs an envelope to the async endpoint and returns the parsed answer. */
  async(baseUrl: string, data: unknown[], auth?: string): Promise<GatewayAnswer>;
}

/** A parsed gateway answer, loosely typed for assertions. */
export interface GatewayAnswer {
  readonly success: boolean;
  readonly error?: string;
  readonly request_id?: string;
  readonly data?: Array<{
    success: boolean;
    error?: string;
    data?: Record<string, unknown> & unknown;
  }>;
}

/** An HTTP client over its own undici Agent, closed after the test. */
export function createHttpClient(t: TestContext): HttpClient {
  const agent = new Agent({ keepAliveTimeout: 1_000 });
  t.after(() => agent.destroy());
  const post: HttpClient['post'] = async (url, body, options = {}) => {
    const headers: Record<string, string> = {};
    const contentType =
      options.contentType === undefined ? 'application/json' : options.contentType;
    if (contentType !== null) headers['content-type'] = contentType;
    const timeoutMs = options.timeoutMs ?? 10_000;
    const response = await request(url, {
      method: 'POST',
      headers,
      body: typeof body === 'string' ? body : JSON.stringify(body),
      dispatcher: agent,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
    });
    return {
      status: response.statusCode,
      headers: response.headers,
      text: await response.body.text(),
    };
  };
  const envelope = async (url: string, data: unknown[], auth: string): Promise<GatewayAnswer> => {
    const answer = await post(url, { auth, data });
    if (answer.status !== 200) throw new Error(`HTTP ${answer.status}: ${answer.text}`);
    return JSON.parse(answer.text) as GatewayAnswer;
  };
  return {
    post,
    async get(url) {
      const response = await request(url, { method: 'GET', dispatcher: agent });
      return {
        status: response.statusCode,
        headers: response.headers,
        text: await response.body.text(),
      };
    },
    sync: (baseUrl, data, auth = API_KEY) => envelope(`${baseUrl}/api/json.php`, data, auth),
    async: (baseUrl, data, auth = API_KEY) => envelope(`${baseUrl}/v1/json`, data, auth),
  };
}

/** A status-callback receiver: records every POST; can answer some with a failure first. */
export interface CallbackReceiver {
  readonly url: string;
  readonly received: Array<{
    path: string;
    contentType: string | undefined;
    body: Record<string, unknown>;
  }>;
  /** Attempts seen, acknowledged or not. */
  attempts: number;
  /** Answer this many next requests with HTTP 500. */
  failNext: number;
  /** Resolves once `count` callbacks were acknowledged; rejects after `timeoutMs`. */
  waitFor(count: number, timeoutMs?: number): Promise<CallbackReceiver['received']>;
}

/** Starts a callback receiver on 127.0.0.1:0, closed after the test. */
export async function startCallbackReceiver(t: TestContext): Promise<CallbackReceiver> {
  const waiters = new Set<() => void>();
  const receiver: CallbackReceiver = {
    url: '',
    received: [],
    attempts: 0,
    failNext: 0,
    waitFor(count, timeoutMs = 5_000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (receiver.received.length < count) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(receiver.received);
        };
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`expected ${count} callbacks, got ${receiver.received.length}`));
        }, timeoutMs);
        waiters.add(check);
        check();
      });
    },
  };
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      receiver.attempts += 1;
      if (receiver.failNext > 0) {
        receiver.failNext -= 1;
        res.writeHead(500).end();
        return;
      }
      receiver.received.push({
        path: req.url ?? '',
        contentType: req.headers['content-type'],
        body: JSON.parse(Buffer.concat(chunks).toString('utf8')) as Record<string, unknown>,
      });
      res.writeHead(200).end();
      for (const check of [...waiters]) check();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  (receiver as { url: string }).url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return receiver;
}

/** A valid `sms` operation with the given id (and overrides). */
export function sms(id: number, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    type: 'sms',
    id,
    phone: PHONE,
    sms_message: 'Your code is 1234',
    sms_signature: 'ferry',
    ...overrides,
  };
}

/** Waits `ms` milliseconds. */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
