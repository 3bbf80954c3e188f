/**
 * The gateway emulator, over real HTTP, sends its status callbacks to the receiver, which
 * publishes them to a real broker: send (with the injected hook) → callback → status event.
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { createHookInjector } from '../../src/callbacks/hook-injection.ts';
import { createEmulator, type Emulator, type EmulatorKnobs } from '../../src/emulator/index.ts';
import {
  postJson,
  type ReceiverHarness,
  type StatusEvent,
  startReceiverHarness,
  TEST_TOKEN,
} from '../callbacks/callback-harness.ts';
import { testBrokers } from '../helpers/kafka.ts';

const brokers = testBrokers();
const API_KEY = 'callbacks-test-key';
const PHONE = 380501234567;

interface Setup {
  readonly h: ReceiverHarness;
  readonly emulator: Emulator;
  readonly inject: (operation: Record<string, unknown>) => boolean;
}

async function setup(t: TestContext, knobs: Partial<EmulatorKnobs> = {}): Promise<Setup> {
  const h = await startReceiverHarness(t, { brokers });
  const emulator = createEmulator({
    apiKey: API_KEY,
    port: 0,
    seed: 5,
    notificationUrl: h.callbackUrl,
    knobs: { callbackDelayMs: 20, ...knobs },
  });
  await emulator.start();
  h.cleanup.defer(() => emulator.stop());
  const inject = createHookInjector({ publicUrl: h.server.url, token: TEST_TOKEN });
  return { h, emulator, inject };
}

/** Posts an envelope to the emulator's sync or async endpoint; returns the parsed answer. */
async function send(
  emulator: Emulator,
  transport: 'sync' | 'async',
  operations: readonly Record<string, unknown>[],
): Promise<Record<string, unknown>> {
  const path = transport === 'sync' ? '/api/json.php' : '/v1/json';
  const answer = await postJson(`${emulator.url}${path}`, { auth: API_KEY, data: operations });
  assert.equal(answer.status, 200);
  return JSON.parse(answer.body) as Record<string, unknown>;
}

function itemsOf(answer: Record<string, unknown>): Record<string, unknown>[] {
  assert.equal(answer.success, true, JSON.stringify(answer));
  return (answer.data as Record<string, unknown>[]).map((item) => {
    assert.equal(item.success, true, JSON.stringify(item));
    return item.data as Record<string, unknown>;
  });
}

function byKey(events: readonly StatusEvent[]): Map<string, Record<string, unknown>> {
  return new Map(events.map((e) => [e.key ?? '', e.value]));
}

test('sync sms with the injected hook: its callback becomes a status event', async (t) => {
  const { h, emulator, inject } = await setup(t);
  const operation: Record<string, unknown> = {
    type: 'sms',
    id: 4101,
    phone: PHONE,
    sms_message: 'Your order shipped',
    sms_signature: 'ferry',
  };
  assert.equal(inject(operation), true);
  const [result] = itemsOf(await send(emulator, 'sync', [operation]));

  const [event] = await h.collector.waitFor(1);
  assert.equal(event?.key, '4101');
  assert.equal(event?.value.id, '4101');
  assert.equal(event?.value.msg_id, result?.msg_id);
  assert.equal(event?.value.success, true);
  assert.equal(event?.value.status, 'DELIVERED');
  assert.equal(event?.value.type, 'sms');
  assert.equal(typeof event?.value.updated, 'string');
  assert.equal(typeof event?.value.received_at, 'string');
  assert.equal(await emulator.whenCallbacksIdle(5_000), true);
  assert.equal(emulator.stats().callbacksSent, 1);
  assert.equal(await h.recordCount(), 1);
});

test('async sends: callbacks carry the request_id; a refused request yields REJECTED', async (t) => {
  const { h, emulator, inject } = await setup(t);
  const accepted: Record<string, unknown> = {
    type: 'sms',
    id: 4201,
    phone: PHONE,
    sms_message: 'Hello',
    sms_signature: 'ferry',
  };
  inject(accepted);
  const first = await send(emulator, 'async', [accepted]);
  assert.equal(first.success, true);
  const acceptedRequestId = first.request_id;
  assert.equal(typeof acceptedRequestId, 'string');

  emulator.setKnobs({ asyncRefuseRate: 1 });
  const refused: Record<string, unknown> = {
    type: 'telegram',
    id: 4202,
    phone: PHONE,
    message: '123456',
  };
  inject(refused);
  const second = await send(emulator, 'async', [refused]);
  assert.equal(second.success, true);

  const events = byKey(await h.collector.waitFor(2));
  const delivered = events.get('4201');
  assert.equal(delivered?.request_id, acceptedRequestId);
  assert.equal(delivered?.status, 'DELIVERED');
  assert.equal(typeof delivered?.msg_id, 'string');
  const rejected = events.get('4202');
  assert.equal(rejected?.success, false);
  assert.equal(rejected?.status, 'REJECTED');
  assert.equal(rejected?.request_id, second.request_id);
  assert.equal(typeof rejected?.error, 'string');
});

test('Viber 2 Way replies with media reach the status topic intact', async (t) => {
  const { h, emulator, inject } = await setup(t, { viberReplyRate: 1 });
  const count = 8;
  const operations = Array.from({ length: count }, (_, index) => {
    const operation: Record<string, unknown> = {
      type: 'viber',
      id: 4300 + index,
      phone: PHONE,
      viber_type: 'text',
      viber_signature: 'ferry',
      viber_message: 'Reply yes or no',
    };
    inject(operation);
    return operation;
  });
  itemsOf(await send(emulator, 'sync', operations));
  const events = await h.collector.waitFor(count);

  let withMedia = 0;
  for (const event of events) {
    assert.equal(event.value.status, 'REPLIED');
    assert.equal(event.value.type, 'viber');
    const replies = event.value.replies as Record<string, unknown>[];
    assert.ok(Array.isArray(replies) && replies.length > 0);
    for (const reply of replies) {
      assert.equal(typeof reply.datetime, 'string');
      const media = reply.media as Record<string, unknown> | undefined;
      if (media === undefined) continue;
      withMedia++;
      assert.match(String(media.url), /^https:\/\//);
      assert.equal(typeof media.filename, 'string');
      assert.equal(typeof media.filesize, 'number');
    }
  }
  // The emulator attaches media to every other reply set; with 8 messages some must carry it.
  assert.ok(withMedia > 0, 'no reply carried media');
});

test('voice via pipeline: the notification callback keeps reply and duration', async (t) => {
  const { h, emulator, inject } = await setup(t);
  const count = 6;
  const operations = Array.from({ length: count }, (_, index) => {
    const operation: Record<string, unknown> = {
      type: 'pipeline',
      id: 4400 + index,
      phone: PHONE,
      pipeline: ['voice'],
      voice: { gender: 'female', language: 'en', name: 'en-US-Standard-C' },
    };
    // pipeline never gets a hook: its status goes to the account's notification address.
    assert.equal(inject(operation), false);
    return operation;
  });
  itemsOf(await send(emulator, 'sync', operations));
  const events = await h.collector.waitFor(count);

  let withReply = 0;
  for (const event of events) {
    assert.equal(event.value.type, 'voice');
    assert.equal(typeof event.value.duration, 'number');
    if (event.value.reply !== undefined) {
      withReply++;
      assert.match(String(event.value.reply), /^\d$/);
    }
  }
  assert.ok(withReply > 0, 'no call carried a DTMF reply');
});
