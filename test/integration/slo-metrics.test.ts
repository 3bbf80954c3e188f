/**
 * The service-level metrics move as commands go through a real ferry, broker and emulator:
 * end-to-end seconds by type, sends accepted and receipts by channel, the age of the
 * oldest uncommitted command per partition, and the commands in doubt after a lost answer.
 * Read from ferry's /metrics over HTTP, parsed here (not with prom-client).
 */
import assert from 'node:assert/strict';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort } from '../../tools/kafka/broker.ts';
import { validOperations } from '../fixtures/operations.ts';
import {
  command,
  produce,
  readRecords,
  startEmulator,
  startFerry,
  type TestFerry,
} from '../helpers/ferry.ts';

const TOKEN = 'slo-callback-token-4f1a';

/** One sample of the text exposition: name, labels, value. */
interface Sample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

/** Parses Prometheus text exposition lines (`name{a="b"} 1`), comments skipped. */
function parseExposition(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!match) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = pair[2] as string;
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

async function scrape(ferry: TestFerry): Promise<Sample[]> {
  const answer = await fetch(`${ferry.daemon.ops.url}/metrics`);
  assert.equal(answer.status, 200);
  return parseExposition(await answer.text());
}

/** The value of the series `name` whose labels include `labels`; undefined when absent. */
function sampleValue(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  return samples.find(
    (sample) =>
      sample.name === name &&
      Object.entries(labels).every(([key, value]) => sample.labels[key] === value),
  )?.value;
}

function seriesOf(samples: readonly Sample[], name: string): Sample[] {
  return samples.filter((sample) => sample.name === name);
}

async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what}`);
}

/** A fixture operation with a new id and no `hook` of its own, so ferry puts its callback route in. */
function send(type: 'sms' | 'viber', id: number): Record<string, unknown> {
  const { hook: _ignored, ...operation } = validOperations[type];
  return { ...operation, id };
}

async function ferryWithReceipts(t: TestContext) {
  const port = await freePort();
  const publicUrl = `http://127.0.0.1:${port}`;
  const emulator = await startEmulator(t, {
    // `pipeline` statuses go to the account's notification address (docs/callbacks.md).
    notificationUrl: `${publicUrl}/callbacks/${TOKEN}`,
    knobs: { callbackDelayMs: 20, viberReplyRate: 0 },
  });
  const ferry = await startFerry(t, emulator, {
    FERRY_HTTP_PORT: String(port),
    FERRY_CALLBACK_PUBLIC_URL: publicUrl,
    FERRY_CALLBACK_TOKEN: TOKEN,
    // Room for the slow answer below (2.5 s) inside one request.
    FERRY_REQUEST_TIMEOUT_MS: '4000',
  });
  return { emulator, ferry };
}

test('end-to-end seconds, sends and receipts by channel, and the oldest uncommitted age move', async (t) => {
  const { emulator, ferry } = await ferryWithReceipts(t);
  const topic = ferry.topics.commands;
  const before = await scrape(ferry);
  assert.deepEqual(
    seriesOf(before, 'ferry_messages_sent_total')
      .map((sample) => `${sample.labels.channel}=${sample.value}`)
      .sort(),
    ['pipeline=0', 'rcs=0', 'sms=0', 'telegram=0', 'viber=0', 'voice=0'],
    'every channel starts at 0',
  );
  assert.equal(sampleValue(before, 'ferry_commands_in_doubt'), 0);

  const sentAt = Date.now();
  await produce(t, [
    command(topic, send('sms', 71_001)),
    command(topic, send('sms', 71_002)),
    command(topic, send('viber', 71_003)),
    command(topic, { ...validOperations.pipeline, id: 71_004 }),
    command(topic, { ...validOperations.hlr, id: 71_005 }),
    // Refused by validation: it has an end-to-end time too, and sends nothing.
    command(topic, { ...validOperations.sms, id: 71_006, sms_lifetime: 1 }),
  ]);
  const results = await readRecords(t, ferry.topics.results, 6);
  const elapsedS = (Date.now() - sentAt) / 1000;
  assert.equal(results.filter((r) => r.value.success === true).length, 5);

  const after = await scrape(ferry);
  const count = (type: string) => sampleValue(after, 'ferry_end_to_end_seconds_count', { type });
  assert.deepEqual(
    { sms: count('sms'), viber: count('viber'), pipeline: count('pipeline'), hlr: count('hlr') },
    { sms: 3, viber: 1, pipeline: 1, hlr: 1 },
  );
  const sum = sampleValue(after, 'ferry_end_to_end_seconds_sum', { type: 'sms' }) ?? -1;
  assert.ok(
    sum > 0 && sum <= 3 * elapsedS + 1,
    `sms end-to-end sum ${sum}s, test saw ${elapsedS}s`,
  );
  assert.equal(sampleValue(after, 'ferry_end_to_end_seconds_bucket', { type: 'sms', le: '60' }), 3);
  assert.deepEqual(
    Object.fromEntries(
      seriesOf(after, 'ferry_messages_sent_total').map((s) => [s.labels.channel, s.value]),
    ),
    { sms: 2, viber: 1, pipeline: 1, rcs: 0, telegram: 0, voice: 0 },
    'hlr is no message; the refused sms was never sent',
  );

  // Every owned partition has an age series, 0 once everything is committed.
  const ages = seriesOf(after, 'ferry_oldest_uncommitted_seconds');
  assert.deepEqual(ages.map((s) => s.labels.partition).sort(), ['0', '1', '2']);
  assert.ok(
    ages.every((s) => s.value === 0),
    JSON.stringify(ages),
  );

  // The emulator posts the final states to ferry: sms, viber, and the pipeline's, delivered
  // on telegram, whose callback carries no `type` (the spec lists sms, viber, voice, rcs).
  const receipts = await eventually('four receipts', async () => {
    const samples = await scrape(ferry);
    const total = seriesOf(samples, 'ferry_receipts_total').reduce((a, s) => a + s.value, 0);
    return total >= 4 ? samples : undefined;
  });
  assert.deepEqual(
    Object.fromEntries(
      seriesOf(receipts, 'ferry_receipts_total').map((s) => [s.labels.channel, s.value]),
    ),
    { sms: 2, viber: 1, telegram: 0, pipeline: 0, rcs: 0, voice: 0, unknown: 1 },
  );
  // A callback that names a channel counts there; one that names none is `unknown`.
  const posted = await fetch(`http://127.0.0.1:${ferry.daemon.http.port}/callbacks/${TOKEN}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ success: true, id: '71004', type: 'telegram', status: 'DELIVERED' }),
  });
  assert.equal(posted.status, 200);
  const manual = await scrape(ferry);
  assert.equal(sampleValue(manual, 'ferry_receipts_total', { channel: 'telegram' }), 1);
  assert.equal(sampleValue(manual, 'ferry_receipts_total', { channel: 'unknown' }), 1);

  // A slow gateway: the command waits uncommitted and its partition's age grows. The
  // gauge refreshes once a second, so the answer takes long enough for two refreshes to
  // fall between 0.5 s and the commit even on a loaded machine.
  emulator.setKnobs({ latencyMs: 2_500 });
  await produce(t, [command(topic, send('sms', 71_007))]);
  const growing = await eventually('an age above 0.5 s', async () => {
    const samples = await scrape(ferry);
    const old = seriesOf(samples, 'ferry_oldest_uncommitted_seconds').find((s) => s.value > 0.5);
    return old;
  });
  assert.ok(growing.value < 10, `age ${growing.value}`);
  await readRecords(t, ferry.topics.results, 7);
  const settled = await eventually('the age back to 0', async () => {
    const samples = await scrape(ferry);
    const ages = seriesOf(samples, 'ferry_oldest_uncommitted_seconds');
    return ages.length === 3 && ages.every((s) => s.value === 0) ? ages : undefined;
  });
  assert.equal(settled.length, 3);
});

test('commands whose answer was lost are in doubt until a lookup settles them', async (t) => {
  const emulator = await startEmulator(t, { knobs: { lostAnswerRate: 1 } });
  const ferry = await startFerry(t, emulator, { FERRY_MAX_ATTEMPTS: '20' });
  await produce(t, [
    command(ferry.topics.commands, { ...validOperations.sms, id: 72_001 }),
    command(ferry.topics.commands, { ...validOperations.sms, id: 72_002 }),
  ]);
  // Both went out in one envelope whose answer never came: ferry cannot tell they arrived.
  await eventually('two commands in doubt', async () => {
    const value = sampleValue(await scrape(ferry), 'ferry_commands_in_doubt');
    return value === 2 ? value : undefined;
  });
  emulator.setKnobs({ lostAnswerRate: 0 });
  const results = await readRecords(t, ferry.topics.results, 2);
  for (const result of results) {
    assert.equal(result.value.success, true);
    assert.equal(result.value.reconciled, true, 'found by the lookup, not sent again');
  }
  assert.equal(sampleValue(await scrape(ferry), 'ferry_commands_in_doubt'), 0);
  assert.deepEqual(emulator.stats().duplicates, []);
});
