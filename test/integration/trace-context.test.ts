/**
 * Trace and correlation headers of a command reach its result, its dead letter and the status
 * events of its message, read back with kcat (`%h`). The status event gets them through the
 * hook URL, so a ferry restarted between the send and the callback still has them; a callback
 * for a command ferry did not send has none; an invalid traceparent travels nowhere.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freePort } from '../../tools/kafka/broker.ts';
import { postJson } from '../callbacks/callback-harness.ts';
import { smsOperation } from '../fixtures/operations.ts';
import {
  command,
  produce,
  readRecords,
  startEmulator,
  startFerry,
  testTopics,
} from '../helpers/ferry.ts';
import { kcatReadAll } from '../helpers/kcat.ts';

const TOKEN = 'trace-context-token';
const traceparent = (n: number) =>
  `00-4bf92f3577b34da6a3ce929d0e0e47${String(n).padStart(2, '0')}-00f067aa0ba902b7-01`;

test('trace headers travel to results, dead letters and status events, across a restart', {
  timeout: 180_000,
}, async (t) => {
  const httpPort = await freePort();
  const env = {
    FERRY_HTTP_PORT: String(httpPort),
    FERRY_CALLBACK_PUBLIC_URL: `http://127.0.0.1:${httpPort}`,
    FERRY_CALLBACK_TOKEN: TOKEN,
  };
  // Callbacks come late and are retried, so they find the second ferry.
  const emulator = await startEmulator(t, {
    knobs: { callbackDelayMs: 5_000 },
    callbacks: { maxAttempts: 12, firstRetryDelayMs: 250 },
  });
  const topics = testTopics();
  const first = await startFerry(t, emulator, env, topics);
  const commands = topics.commands;
  await produce(t, [
    command(commands, smsOperation(961), {
      traceparent: traceparent(1),
      tracestate: 'congo=t61rcWkgMzE',
      'correlation-id': 'order-961',
      'x-not-listed': 'stays behind',
    }),
    command(commands, smsOperation(962), {
      'ferry-transport': 'async',
      traceparent: 'not-a-traceparent',
      tracestate: 'congo=t61rcWkgMzE',
      'correlation-id': 'order-962',
    }),
    command(commands, smsOperation(963, { sms_lifetime: 10 }), { traceparent: traceparent(3) }),
    { topic: commands, key: 'garbage', value: '{oops', headers: { traceparent: traceparent(4) } },
    { topic: commands, key: 'junk', value: '{oops', headers: { traceparent: 'junk' } },
  ]);
  await readRecords(t, topics.results, 5);

  // A restart between the send and the callback: nothing was remembered, nothing is lost.
  await first.daemon.stop();
  const second = await startFerry(t, emulator, env, topics);

  // An async pipeline refused by the gateway: its REJECTED callback reaches the injected hook.
  emulator.setKnobs({ asyncRefuseRate: 1 });
  await produce(t, [
    command(
      commands,
      {
        type: 'pipeline',
        id: 964,
        phone: smsOperation(964).phone,
        pipeline: ['sms'],
        sms: { message: 'Hi', signature: smsOperation(964).sms_signature },
      },
      { 'ferry-transport': 'async', traceparent: traceparent(5) },
    ),
  ]);
  // A callback of a message ferry did not send: no query, no headers.
  const foreign = await postJson(`http://127.0.0.1:${httpPort}/callbacks/${TOKEN}`, {
    success: true,
    id: '970',
    status: 'DELIVERED',
  });
  assert.equal(foreign.status, 200);
  await readRecords(t, topics.status, 4, { settleMs: 500 });

  const results = new Map((await kcatReadAll(topics.results)).map((r) => [r.key, r]));
  assert.equal(
    results.get('961')?.headerText,
    `traceparent=${traceparent(1)},tracestate=congo=t61rcWkgMzE,correlation-id=order-961`,
  );
  assert.equal(
    results.get('962')?.headerText,
    'correlation-id=order-962',
    'invalid traceparent left out',
  );
  assert.equal(results.get('963')?.headerText, `traceparent=${traceparent(3)}`);
  assert.equal(results.get('garbage')?.headerText, `traceparent=${traceparent(4)}`);
  assert.equal(results.get('junk')?.headerText, '');
  assert.equal(results.get('964')?.headerText, `traceparent=${traceparent(5)}`);

  const deadLetters = new Map((await kcatReadAll(topics.dlq)).map((r) => [r.key, r]));
  assert.equal(deadLetters.get('garbage')?.headers.traceparent, traceparent(4));
  assert.equal(deadLetters.get('junk')?.headers.traceparent, undefined);
  assert.equal(deadLetters.get('junk')?.headers['ferry-error-code'], 'validation');

  const events = new Map((await kcatReadAll(topics.status)).map((r) => [r.key, r]));
  assert.equal(
    events.get('961')?.headerText,
    `traceparent=${traceparent(1)},tracestate=congo=t61rcWkgMzE,correlation-id=order-961`,
    'the status event of a message sent before the restart',
  );
  assert.equal(events.get('962')?.headerText, 'correlation-id=order-962');
  const rejected = events.get('964');
  assert.equal(rejected?.headerText, `traceparent=${traceparent(5)}`);
  assert.equal(JSON.parse(rejected?.value.toString('utf8') ?? '{}').status, 'REJECTED');
  assert.equal(events.get('970')?.headerText, '', 'a message ferry did not send');
  // All four came through the second ferry: the first was gone before any callback.
  const published = (await second.metrics.callbacks.get()).values
    .filter((v) => v.labels.outcome === 'published')
    .reduce((sum, v) => sum + v.value, 0);
  assert.equal(published, 4);
  const before = (await first.metrics.callbacks.get()).values.reduce((sum, v) => sum + v.value, 0);
  assert.equal(before, 0, 'the first ferry received no callback');
});
