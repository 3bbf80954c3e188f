/**
 * Kafka goes away during a callback: the receiver answers 503 (so the gateway retries), and once
 * the broker is back the retry gets 200 and the topic holds the event exactly once. Uses a broker
 * of its own (tools/kafka/broker.ts) that the test stops and starts again on the same ports and
 * data folder, so the shared test broker is never touched.
 */
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { brokerPorts, type RunningBroker, startBroker } from '../../tools/kafka/broker.ts';
import {
  CleanupStack,
  postJson,
  type RawResponse,
  StatusCollector,
  startReceiverHarness,
} from '../callbacks/callback-harness.ts';
import { uniqueTopic } from '../helpers/kafka.ts';

const PUBLISH_TIMEOUT_MS = 2_000;

test('Kafka down during a callback: 503, then 200 on retry, exactly one event', {
  timeout: 240_000,
}, async (t) => {
  const cleanup = new CleanupStack(t);
  const dir = await mkdtemp(join(tmpdir(), 'ferry-callbacks-kafka-'));
  cleanup.defer(() => rm(dir, { recursive: true, force: true }));
  const brokerOptions = {
    dir,
    ...(await brokerPorts()),
    heapMb: 384,
  };
  let broker: RunningBroker | undefined = await startBroker(brokerOptions);
  cleanup.defer(() => broker?.stop(10_000));

  const h = await startReceiverHarness(t, {
    brokers: [broker.brokers],
    collect: false,
    cleanup,
    receiver: { publishTimeoutMs: PUBLISH_TIMEOUT_MS },
  });
  const before = {
    success: true,
    id: '5001',
    status: 'DELIVERED',
    updated: '2024-05-01T10:00:00+00:00',
  };
  assert.equal((await postJson(h.callbackUrl, before)).status, 200);

  await broker.stop(10_000);
  broker = undefined;

  const during = {
    success: true,
    id: '5002',
    status: 'READ',
    updated: '2024-05-01T10:01:00+00:00',
  };
  const startedAt = Date.now();
  const refused = await postJson(h.callbackUrl, during);
  assert.equal(refused.status, 503);
  assert.equal(refused.headers['retry-after'], '5');
  // Answered within the publish timeout (plus slack), not after kafkajs gave up retrying.
  assert.ok(
    Date.now() - startedAt < PUBLISH_TIMEOUT_MS + 1_500,
    `took ${Date.now() - startedAt} ms`,
  );
  assert.equal(await h.callbackCount('unavailable', 'READ'), 1);

  broker = await startBroker(brokerOptions);

  // The gateway retries until it gets 200.
  const answers: RawResponse[] = [];
  const deadline = Date.now() + 90_000;
  for (;;) {
    const answer = await postJson(h.callbackUrl, during);
    answers.push(answer);
    if (answer.status === 200) break;
    assert.equal(answer.status, 503, answer.body);
    assert.ok(Date.now() < deadline, `no 200 after ${answers.length} retries`);
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  // Repeating it once more changes nothing.
  assert.equal((await postJson(h.callbackUrl, during)).status, 200);

  const collector = new StatusCollector(
    h.kafka.createRecordConsumer({
      groupId: uniqueTopic('callbacks-restart-reader'),
      topics: [h.topic],
    }),
  );
  await collector.start();
  cleanup.defer(() => collector.stop());
  const events = await collector.waitFor(2, 60_000);
  assert.equal(await h.recordCount(), 2);
  assert.deepEqual(
    events.map((e) => [e.key, e.value.status]),
    [
      ['5001', 'DELIVERED'],
      ['5002', 'READ'],
    ],
  );
});
