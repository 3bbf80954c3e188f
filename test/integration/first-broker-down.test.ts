/**
 * A node of the cluster is down when ferry starts, and it is the first of
 * FERRY_KAFKA_BROKERS: start-up must go on through the others. kafkajs tries the first
 * broker of the list first, and a client without retries tried nothing else: ferry
 * waited, try after try, for the dead node (found by the cluster chaos run, where a
 * replica starting during a kill -9 waited 50 s for the killed node).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { freePort } from '../../tools/kafka/broker.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { command, produce, readRecords, startEmulator, startFerry } from '../helpers/ferry.ts';
import { testBrokers } from '../helpers/kafka.ts';

test('start-up goes on through the other brokers when the first one listed is down', async (t) => {
  const emulator = await startEmulator(t);
  // Nothing listens there: connecting is refused, as to a node killed with kill -9.
  const dead = `127.0.0.1:${await freePort()}`;
  const startedAt = Date.now();
  const ferry = await startFerry(t, emulator, {
    FERRY_KAFKA_BROKERS: [dead, ...testBrokers()].join(','),
  });
  const tookMs = Date.now() - startedAt;
  // Before, every try went to the dead node until the minute of connecting ran out.
  assert.ok(tookMs < 45_000, `ready after ${tookMs} ms`);
  await produce(t, [command(ferry.topics.commands, smsOperation(91_001))]);
  const [result] = await readRecords(t, ferry.topics.results, 1);
  assert.equal(result?.value.success, true);
  t.diagnostic(`ready ${tookMs} ms after start with ${dead} first`);
});
