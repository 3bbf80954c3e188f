/**
 * The urgent lane: commands written with kcat (librdkafka) to FERRY_TOPIC_COMMANDS_URGENT
 * while a bulk backlog drains slowly through a slow gateway. The urgent ones are sent and
 * answered at once, not after the backlog; every command of both lanes gets exactly one
 * result, and the gateway sees each once.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { kcatResults, kcatWrite, untilResults } from '../helpers/dedupe-copies.ts';
import { startEmulator, startFerry, testTopics } from '../helpers/ferry.ts';

const BULK = 1_200;
const URGENT = 6;
/** Each envelope answered after this long: the bulk backlog takes about 15–30 s to drain. */
const GATEWAY_LATENCY_MS = 250;

test('urgent commands are answered while a bulk backlog is still draining, each exactly once', {
  timeout: 120_000,
}, async (t) => {
  const emulator = await startEmulator(t, { knobs: { latencyMs: GATEWAY_LATENCY_MS } });
  const topics = testTopics();
  const urgentTopic = `${topics.commands}.urgent`;
  const ferry = await startFerry(
    t,
    emulator,
    {
      FERRY_TOPIC_COMMANDS_URGENT: urgentTopic,
      FERRY_CONCURRENCY: '2',
      FERRY_CONCURRENCY_URGENT: '2',
      FERRY_BATCH_MAX_OPS: '10',
      FERRY_TOPIC_PARTITIONS: '2',
    },
    topics,
  );
  const bulkIds = Array.from({ length: BULK }, (_, i) => 10_000 + i);
  await kcatWrite(topics.commands, bulkIds);
  // The backlog is being worked on: some results are out, most are not.
  const deadline = Date.now() + 30_000;
  while (Object.keys(emulator.stats().sendsById).length === 0) {
    assert.ok(Date.now() < deadline, 'the bulk lane started sending');
    await sleep(50);
  }
  const urgentIds = Array.from({ length: URGENT }, (_, i) => 90_000 + i);
  const writtenAt = Date.now();
  await kcatWrite(urgentTopic, urgentIds);
  const urgentResults = await untilResults(topics.results, BULK + URGENT, 0).catch(() => undefined);
  assert.equal(urgentResults, undefined, 'not everything is done yet');
  // The urgent results, as soon as they are committed.
  let answeredMs = 0;
  for (;;) {
    const results = await kcatResults(topics.results);
    const urgentDone = results.filter((r) => Number(r.key) >= 90_000);
    if (urgentDone.length === URGENT) {
      answeredMs = Date.now() - writtenAt;
      const sends = emulator.stats().sendsById;
      const bulkSent = bulkIds.filter((id) => sends[String(id)] !== undefined).length;
      t.diagnostic(`urgent answered after ${answeredMs} ms, with ${bulkSent} of ${BULK} bulk sent`);
      assert.ok(bulkSent < BULK / 2, `the backlog was still draining (${bulkSent} sent)`);
      assert.ok(urgentDone.every((r) => r.value.success === true));
      break;
    }
    assert.ok(Date.now() - writtenAt < 10_000, 'the urgent commands were answered within 10 s');
    await sleep(50);
  }
  const state = ferry.daemon.pipeline.state();
  assert.deepEqual(
    [...new Set(state.partitions.map((p) => p.topic))].sort(),
    [topics.commands, urgentTopic].sort(),
    'the state shows both lanes',
  );

  const all = await untilResults(topics.results, BULK + URGENT, 90_000);
  await sleep(500);
  assert.equal((await kcatResults(topics.results)).length, BULK + URGENT, 'one result each');
  assert.equal(new Set(all.map((r) => r.key)).size, BULK + URGENT);
  const sends = emulator.stats().sendsById;
  assert.ok(
    [...bulkIds, ...urgentIds].every((id) => sends[String(id)] === 1),
    'the gateway got every command once',
  );
  // The urgent lane runs on a thread of its own with a registry of its own; /metrics
  // serves both, its gauges labelled, the counters both write added up.
  const text = await (await fetch(`http://127.0.0.1:${ferry.daemon.ops.port}/metrics`)).text();
  assert.match(text, /^ferry_envelopes_in_flight 0$/m, "the bulk lane's gauge");
  assert.match(text, /^ferry_envelopes_in_flight\{lane="urgent"\} 0$/m, "the urgent lane's gauge");
  const consumed = [...text.matchAll(/^ferry_commands_consumed_total\{[^}]*\} (\d+)$/gm)].reduce(
    (sum, match) => sum + Number(match[1]),
    0,
  );
  assert.equal(consumed, BULK + URGENT, 'commands read by both lanes are counted once each');
  assert.equal(text.match(/^# TYPE process_cpu_seconds_total /gm)?.length, 1);
});
