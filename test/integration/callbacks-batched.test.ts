/**
 * The receipt path under concurrency, against a real broker: receipts posted at once are
 * written together (receipt-batcher.ts), yet each is answered 200 only once its own record is
 * in Kafka, two copies of one receipt in flight together make one event, and a write the
 * broker refuses answers every request it carried with 503 and loses none of them: the
 * gateway's retry writes each once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { postJson, type RawResponse, startReceiverHarness } from '../callbacks/callback-harness.ts';
import { testBrokers } from '../helpers/kafka.ts';

function receipt(id: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    success: true,
    id,
    msg_id: `g-${id}`,
    type: 'sms',
    status: 'DELIVERED',
    updated: '2024-05-01T10:00:00Z',
    ...extra,
  };
}

test('concurrent receipts: each 200 comes after its own record is in Kafka; a concurrent repeat is one event', async (t) => {
  const h = await startReceiverHarness(t, { brokers: testBrokers() });
  const ids = Array.from({ length: 150 }, (_, i) => `c-${i}`);
  // The end offset read as each answer arrives: that answer's record must lie below it.
  const endAtAnswer = new Map<string, number>();
  const answers = await Promise.all(
    [...ids, 'c-7', 'c-42'].map(async (id, index) => {
      const answer = await postJson(h.callbackUrl, receipt(id));
      if (answer.status === 200 && index < ids.length) endAtAnswer.set(id, await h.recordCount());
      return { id, answer };
    }),
  );
  for (const { id, answer } of answers) assert.equal(answer.status, 200, `${id}: ${answer.body}`);
  const duplicates = answers.filter(({ answer }) => JSON.parse(answer.body).duplicate === true);
  assert.equal(duplicates.length, 2, 'each repeat is answered as a duplicate of its first copy');

  const events = await h.collector.waitFor(ids.length);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const offsets = new Map<string, number[]>();
  for (const event of h.collector.events) {
    const key = event.key ?? '';
    offsets.set(key, [...(offsets.get(key) ?? []), Number(event.offset)]);
  }
  assert.equal(h.collector.events.length, ids.length, 'one event per distinct receipt');
  for (const id of ids) {
    const at = offsets.get(id);
    assert.equal(at?.length, 1, `${id} is on the topic once`);
    const end = endAtAnswer.get(id) ?? -1;
    assert.ok(
      (at?.[0] ?? Infinity) < end,
      `${id}: offset ${at?.[0]} readable when answered (end ${end})`,
    );
  }
  assert.equal(events.length, ids.length);
});

test('a write the broker refuses answers its requests 503 and loses nothing; the retry writes each once', async (t) => {
  const h = await startReceiverHarness(t, { brokers: testBrokers() });
  const admin = new Kafka({ brokers: testBrokers(), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  h.cleanup.defer(() => admin.disconnect());
  const setMaxMessageBytes = (value: string) =>
    admin.alterConfigs({
      validateOnly: false,
      resources: [
        { type: 2, name: h.topic, configEntries: [{ name: 'max.message.bytes', value }] },
      ],
    });
  // A record batch over this is refused by the broker (MESSAGE_TOO_LARGE): the large receipt's
  // write fails, and with it every receipt that shares that write; the others go through.
  await setMaxMessageBytes('20000');
  const ids = Array.from({ length: 40 }, (_, i) => `f-${i}`);
  // In the middle, so that it is likely to share a write with others.
  const LARGE = 'f-20';
  const body = (id: string) =>
    receipt(id, id === LARGE ? { error: 'x'.repeat(30_000) } : { status: 'DELIVERED' });
  const first = await Promise.all(ids.map((id) => postJson(h.callbackUrl, body(id))));
  const refused = ids.filter((_, i) => (first[i] as RawResponse).status !== 200);
  assert.ok(refused.includes(LARGE), 'the receipt over the limit is refused');
  assert.ok(refused.length < ids.length, 'writes without it went through');
  for (const id of refused) {
    const answer = first[ids.indexOf(id)] as RawResponse;
    assert.equal(answer.status, 503, `${id}: ${answer.body}`);
    assert.ok(answer.headers['retry-after'], 'a 503 says when to retry');
  }
  const acceptedFirst = ids.length - refused.length;
  await h.collector.waitFor(acceptedFirst);
  assert.equal(await h.recordCount(), acceptedFirst, 'only what was answered 200 is on the topic');
  const onTopic = new Set(h.collector.events.map((e) => e.key));
  for (const id of refused) assert.ok(!onTopic.has(id), `${id} was refused and is not written`);

  // The gateway retries what was refused (and, to be sure, everything once more).
  await setMaxMessageBytes('1048588');
  const retried = await Promise.all(ids.map((id) => postJson(h.callbackUrl, body(id))));
  for (const [i, answer] of retried.entries()) {
    assert.equal(answer.status, 200, `${ids[i]}: ${answer.body}`);
  }
  const events = await h.collector.waitFor(ids.length);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const keys = h.collector.events.map((e) => e.key).sort();
  assert.deepEqual(keys, [...ids].sort(), 'every receipt once, none lost, none doubled');
  assert.equal(events.length, ids.length);
});
