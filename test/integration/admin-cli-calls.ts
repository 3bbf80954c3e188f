/**
 * What the foreign-client tests (grpcurl, buf curl) share: a running ferry process
 * (broker, emulator, a dead letter to look at) and one call of every AdminService
 * method, in an order where each answer is known, with a check of its content.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import type { TestContext } from 'node:test';
import { AdminService } from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { FIXTURE_PHONE, FIXTURE_SENDER } from '../fixtures/operations.ts';
import { processEnv, produce, startEmulator, testTopics } from '../helpers/ferry.ts';
import { spawnFerry, waitForLog } from '../helpers/ferry-process.ts';

export const FERRY_TOKEN = 'foreign-client-admin-token-42';
export const PACKAGE_VERSION = (
  JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
    version: string;
  }
).version;

/** The dead letter the running ferry's DLQ holds. */
export const DEAD_LETTER = {
  key: '7401',
  value: JSON.stringify({
    type: 'sms',
    id: 7401,
    phone: FIXTURE_PHONE,
    sms_message: 'parked',
    sms_signature: FIXTURE_SENDER,
  }),
  error: 'gateway request timed out',
};

export interface RunningFerry {
  /** `127.0.0.1:port` of its admin API. */
  readonly address: string;
  /** `http://127.0.0.1:port` of its public HTTP port (callbacks). */
  readonly httpUrl: string;
  /** `http://127.0.0.1:port` of its operations port (metrics, probes). */
  readonly opsUrl: string;
}

/** The running ferry's bounds, small enough for a test to cross them. */
export const RUNNING_LIMITS = { grpcMaxReceiveBytes: 8192, httpMaxHeaderBytes: 4096 };

/** Starts ferry as a process (`node src/main.ts`) with an admin token, on loopback. */
export async function startRunningFerry(t: TestContext): Promise<RunningFerry> {
  const emulator = await startEmulator(t, { initialBalance: 1000, currency: 'EUR' });
  const topics = testTopics();
  const ferry = spawnFerry(t, {
    ...processEnv(topics, emulator),
    FERRY_ADMIN_LOOPBACK_ONLY: 'false',
    FERRY_ADMIN_TOKEN: FERRY_TOKEN,
    FERRY_TOPIC_PARTITIONS: '1',
    FERRY_KAFKA_SESSION_TIMEOUT_MS: '6000',
    FERRY_REQUEST_TIMEOUT_MS: '2000',
    FERRY_SHUTDOWN_GRACE_MS: '2000',
    FERRY_GRPC_MAX_RECEIVE_BYTES: String(RUNNING_LIMITS.grpcMaxReceiveBytes),
    FERRY_HTTP_MAX_HEADER_BYTES: String(RUNNING_LIMITS.httpMaxHeaderBytes),
  });
  await waitForLog(ferry, 'ferry is running', 60_000);
  const port = /"grpcPort":(\d+)/.exec(ferry.output())?.[1];
  const httpPort = /"httpPort":(\d+)/.exec(ferry.output())?.[1];
  const opsPort = /"opsPort":(\d+)/.exec(ferry.output())?.[1];
  assert.ok(port && httpPort && opsPort, 'ferry logged its ports');
  await produce(t, [
    {
      topic: topics.dlq,
      key: DEAD_LETTER.key,
      value: DEAD_LETTER.value,
      headers: { 'ferry-error': DEAD_LETTER.error, 'ferry-delivery': 'unsent' },
    },
  ]);
  return {
    address: `127.0.0.1:${port}`,
    httpUrl: `http://127.0.0.1:${httpPort}`,
    opsUrl: `http://127.0.0.1:${opsPort}`,
  };
}

type Json = Record<string, unknown>;

export interface MethodCall {
  /** The method's name in the service, e.g. `GetBalance`. */
  readonly method: string;
  /** The request as proto3 JSON, made from the answers before it. */
  readonly request: (earlier: ReadonlyMap<string, Json>) => Json;
  /** Fails unless the answer is the one expected. */
  readonly check: (answer: Json) => void;
}

const OTP_ID = 7402;
const HLR_PHONE = '380501234567';

function list(value: unknown): Json[] {
  assert.ok(Array.isArray(value), `a list: ${JSON.stringify(value)}`);
  return value as Json[];
}

/** Every AdminService method once, in an order where each answer is known. */
export const methodCalls: readonly MethodCall[] = [
  {
    method: 'GetBalance',
    request: () => ({}),
    check: (a) =>
      assert.deepEqual(a, {
        amount: 1000,
        currency: 'EUR',
        raw: { amount: 1000, currency: 'EUR' },
      }),
  },
  {
    method: 'ListSenders',
    request: () => ({}),
    check: (a) =>
      assert.deepEqual(
        list(a.senders).map((s) => s.name),
        ['FERRY', 'FERRY RCS'],
      ),
  },
  {
    method: 'LookupHlr',
    // No id: ferry assigns one and answers with it.
    request: () => ({ phone: HLR_PHONE }),
    check: (a) => {
      assert.match(String(a.id), /^\d{16}$/);
      assert.equal(a.phone, HLR_PHONE);
      assert.equal(a.status, 'DELIVERED');
      assert.equal((a.originNetwork as Json | undefined)?.country !== undefined, true);
    },
  },
  {
    method: 'CallOtp',
    request: () => ({ id: OTP_ID, phone: HLR_PHONE }),
    check: (a) => {
      const result = a.result as Json;
      assert.equal(result.id, OTP_ID);
      assert.match(String(result.code), /^\d{4}$/);
      assert.equal(String(result.caller).slice(-4), result.code, 'the caller ends with the code');
    },
  },
  {
    method: 'GetMessageStatus',
    request: () => ({ id: OTP_ID }),
    check: (a) => {
      assert.equal(a.id, String(OTP_ID));
      assert.ok(typeof a.msgId === 'string' && a.msgId.length > 0, 'a msg_id');
      assert.ok(typeof a.status === 'string' && a.status.length > 0, 'a status');
    },
  },
  {
    method: 'CreateTemplate',
    request: () => ({ template: 'Your code is {code}', name: 'otp' }),
    check: (a) => {
      const template = a.template as Json;
      assert.equal(template.name, 'otp');
      assert.equal(template.template ?? template.text, 'Your code is {code}');
    },
  },
  {
    method: 'ListTemplates',
    request: () => ({}),
    check: (a) =>
      assert.deepEqual(
        list(a.templates).map((t) => t.name),
        ['otp'],
      ),
  },
  {
    method: 'DeleteTemplates',
    request: () => ({ template: 'Your code is {code}' }),
    check: (a) => assert.deepEqual(a.result, { deleted: 1 }),
  },
  {
    method: 'CreateViberTemplate',
    request: () => ({ fields: { name: 'promo', text: 'Spring sale' } }),
    check: (a) => {
      const result = a.result as Json;
      assert.equal(result.name, 'promo');
      assert.equal(typeof result.id, 'number');
    },
  },
  {
    method: 'ListViberTemplates',
    request: () => ({}),
    check: (a) =>
      assert.deepEqual(
        list(a.result).map((t) => t.name),
        ['promo'],
      ),
  },
  {
    method: 'DeleteViberTemplates',
    request: (earlier) => ({
      fields: { id: (earlier.get('CreateViberTemplate')?.result as Json | undefined)?.id },
    }),
    check: (a) => assert.deepEqual(a.result, { deleted: 1 }),
  },
  {
    method: 'PauseConsumption',
    request: () => ({}),
    check: (a) => {
      const state = a.state as Json;
      assert.equal(state.paused, true);
      assert.deepEqual(state.pauseReasons, ['PAUSE_REASON_OPERATOR']);
    },
  },
  {
    method: 'GetPipelineState',
    request: () => ({}),
    check: (a) => {
      assert.equal(a.version, PACKAGE_VERSION);
      const state = a.state as Json;
      assert.equal(state.running, true);
      assert.equal(state.paused, true);
      assert.equal(list(state.partitions).length, 1);
      // The fleet as the control topic shows it: this one replica, paused by the call above.
      const fleet = a.fleet as Json;
      assert.equal(list(fleet.replicas).length, 1);
      assert.equal((fleet.desired as Json).desired, 'DESIRED_CONSUMPTION_PAUSED');
    },
  },
  {
    method: 'ResumeConsumption',
    request: () => ({}),
    check: (a) => {
      const state = a.state as Json;
      assert.equal(state.running, true);
      assert.equal(state.paused, undefined, 'false is left out of proto3 JSON');
    },
  },
  {
    method: 'DrainConsumption',
    request: () => ({ reason: 'drain test' }),
    check: (a) => {
      const desired = (a.fleet as Json).desired as Json;
      assert.equal(desired.desired, 'DESIRED_CONSUMPTION_DRAINING');
      assert.equal(desired.reason, 'drain test');
      assert.deepEqual((a.state as Json).pauseReasons, ['PAUSE_REASON_DRAINING']);
    },
  },
  {
    method: 'ListDeadLetters',
    request: () => ({ includeValue: true }),
    check: (a) => {
      const [letter, ...more] = list(a.deadLetters);
      assert.equal(more.length, 0);
      assert.equal(letter?.key, DEAD_LETTER.key);
      assert.equal(letter?.error, DEAD_LETTER.error);
      assert.equal(letter?.type, 'sms');
      assert.equal(letter?.value, DEAD_LETTER.value);
    },
  },
  {
    method: 'ReplayDeadLetters',
    request: () => ({ dryRun: true }),
    check: (a) => {
      assert.equal(a.replayed, undefined, 'a dry run replays nothing');
      assert.deepEqual(
        list(a.wouldReplay).map((d) => [d.key, d.value]),
        [[DEAD_LETTER.key, DEAD_LETTER.value]],
      );
    },
  },
];

/** Every method of the service is in the table, once. */
export function assertEveryMethodCovered(): void {
  assert.deepEqual(
    methodCalls.map((c) => c.method).sort(),
    AdminService.methods.map((m) => m.name).sort(),
  );
}
