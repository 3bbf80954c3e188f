/**
 * A final status for every message sent, exactly one, whichever way it comes: the
 * emulator drops a share of its callbacks, sends some twice and some late; ferry's
 * `status` lookups find the dropped ones. The final events are read with kcat.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freePort } from '../../tools/kafka/broker.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { command, produce, readRecords, startEmulator, startFerry } from '../helpers/ferry.ts';
import { finalEventsById } from '../helpers/final-events.ts';
import { eventually } from '../helpers/fleet.ts';
import { testBrokers } from '../helpers/kafka.ts';
import { loadPublishedSchemas } from '../helpers/published-schemas.ts';

const brokers = testBrokers().join(',');

const finalEvents = (topic: string) => finalEventsById(brokers, topic);

test('callbacks dropped, doubled and late: every message sent gets exactly one final status event', async (t) => {
  const httpPort = await freePort();
  const emulator = await startEmulator(t, {
    knobs: {
      callbackDelayMs: 100,
      callbackDropRate: 0.3,
      callbackDuplicateRate: 0.3,
      callbackLateRate: 0.2,
      callbackLateMs: 2_500,
    },
  });
  const ferry = await startFerry(t, emulator, {
    FERRY_HTTP_PORT: String(httpPort),
    FERRY_CALLBACK_PUBLIC_URL: `http://127.0.0.1:${httpPort}`,
    FERRY_CALLBACK_TOKEN: 'final-status-token',
    FERRY_STATUS_TRACKING: 'true',
    FERRY_STATUS_POLL_AFTER_MS: '4000',
    FERRY_STATUS_GIVE_UP_AFTER_MS: '120000',
    FERRY_STATUS_FOLLOW_MS: '200',
  });
  const topics = ferry.topics;
  const tracking = ferry.env.FERRY_TOPIC_TRACKING;
  assert.ok(tracking);
  const finalTopic = `${topics.status}.final`;
  // Named per test (the helper's env does not know this topic).
  assert.equal(ferry.env.FERRY_TOPIC_STATUS_FINAL, finalTopic);

  const ids = Array.from({ length: 60 }, (_, index) => 7_000 + index);
  await produce(
    t,
    ids.map((id, index) =>
      index % 3 === 2
        ? command(topics.commands, smsOperation(id), { 'ferry-transport': 'async' })
        : command(topics.commands, smsOperation(id)),
    ),
  );
  const results = await readRecords(t, topics.results, ids.length);
  assert.ok(results.every((r) => r.value.success === true));

  const finals = await eventually(
    'a final status event for every message',
    async () => {
      const events = await finalEvents(finalTopic);
      return events.size >= ids.length ? events : undefined;
    },
    60_000,
  );
  // Late and doubled callbacks keep arriving for a while: none may add an event.
  await new Promise((resolve) => setTimeout(resolve, 4_000));
  const settled = await finalEvents(finalTopic);
  assert.deepEqual([...settled.keys()].sort(), ids.map(String).sort());
  // Checked by Ajv against the published schema, not by the code that wrote them.
  const validate = (await loadPublishedSchemas()).validator('final-status-event.schema.json');
  const sources = new Map<string, number>();
  for (const [id, events] of settled) {
    assert.equal(events.length, 1, `id ${id}: ${events.length} final events`);
    const event = events[0] as Record<string, unknown>;
    assert.ok(validate(event), `id ${id}: ${JSON.stringify(validate.errors)}`);
    assert.equal(event.id, id);
    assert.equal(event.type, 'sms');
    assert.equal(typeof event.status, 'string');
    assert.notEqual(event.status, 'SENT');
    assert.equal(typeof event.sent_at, 'string');
    sources.set(String(event.source), (sources.get(String(event.source)) ?? 0) + 1);
  }
  assert.equal(finals.size, ids.length);
  const stats = emulator.stats();
  assert.ok(stats.callbacksDropped > 0, 'the emulator dropped callbacks');
  assert.ok(stats.callbacksDuplicated > 0, 'the emulator doubled callbacks');
  // Each dropped callback's message was found by a lookup; none was given up.
  assert.ok((sources.get('poll') ?? 0) >= 1, JSON.stringify([...sources]));
  assert.ok((sources.get('callback') ?? 0) >= 1, JSON.stringify([...sources]));
  assert.equal(sources.get('give_up'), undefined);
});

test('at FERRY_STATUS_MAX_PENDING messages awaiting a final status, fetching pauses until lookups finalize them', async (t) => {
  const emulator = await startEmulator(t, { knobs: { callbackDelayMs: 50, callbackDropRate: 1 } });
  const ferry = await startFerry(t, emulator, {
    FERRY_STATUS_TRACKING: 'true',
    FERRY_STATUS_MAX_PENDING: '1000',
    FERRY_STATUS_POLL_AFTER_MS: '3000',
    FERRY_STATUS_GIVE_UP_AFTER_MS: '120000',
    FERRY_STATUS_FOLLOW_MS: '200',
    FERRY_BATCH_MAX_OPS: '100',
    // The bound is seen once the sent messages' records are read back: what is already in
    // flight then still goes out. A small in-flight budget keeps that overshoot small.
    FERRY_MAX_COMMANDS_IN_FLIGHT: '200',
  });
  const { topics } = ferry;
  const ids = Array.from({ length: 8_000 }, (_, index) => 20_000 + index);
  await produce(
    t,
    ids.map((id) => command(topics.commands, smsOperation(id))),
  );
  const pausedForTracking = async () =>
    (await ferry.metrics.consumptionPaused.get()).values.find(
      (v) => v.labels.reason === 'tracking' && v.labels.lane === undefined,
    )?.value;
  await eventually(
    'fetching paused for tracking',
    async () => ((await pausedForTracking()) === 1 ? true : undefined),
    30_000,
  );
  // While paused, what was not fetched waits. Messages count toward the bound when their
  // results commit (not a follow round later: a slow round let nearly all 8,000 out), so
  // only what was already fetched then still goes out (about 3,100 here: kafkajs's first
  // fetches).
  const sentWhilePaused = Object.keys(emulator.stats().sendsById).length;
  t.diagnostic(`sent while paused: ${sentWhilePaused}`);
  assert.ok(sentWhilePaused < 6_000, `${sentWhilePaused} of ${ids.length} sent while paused`);
  // Lookups finalize the first ones; fetching resumes and every command ends with one final event.
  await readRecords(t, topics.results, ids.length, { timeoutMs: 90_000 });
  const finals = await eventually(
    'a final status event for every message',
    async () => {
      const events = await finalEvents(`${topics.status}.final`);
      return events.size >= ids.length ? events : undefined;
    },
    90_000,
  );
  assert.ok([...finals.values()].every((events) => events.length === 1));
  assert.ok([...finals.values()].every((events) => events[0]?.source === 'poll'));
  assert.equal(await pausedForTracking(), 0);
});
