/**
 * A replica that starts while a broker is killed. kafkajs's consumer `subscribe` reads
 * the topic's metadata once and does not retry a connection reset in the middle of it;
 * ferry's start then failed ("ferry could not start: read ECONNRESET"), an exit a
 * rolling deploy during a broker restart would crash-loop on. The start is tried again.
 */
import assert from 'node:assert/strict';
import net from 'node:net';
import { test } from 'node:test';
import { KafkaClient } from '../../src/kafka/kafka-client.ts';
import { Kafka } from '../../src/kafka/kafkajs.ts';
import { isRetriableKafkaError, retryWhilePassing } from '../../src/kafka/start-retry.ts';
import { testLogger } from '../helpers/ferry.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

/** Kafka's Metadata request's API key. */
const METADATA = 3;

/**
 * A TCP relay to a broker that resets the connection (RST, as a killed broker's kernel
 * does) on the first `resets` Metadata requests it sees, and relays everything else.
 */
async function metadataResettingRelay(target: string, resets: number) {
  const [host, port] = target.split(':') as [string, string];
  let left = resets;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(port), host);
    sockets.add(client).add(upstream);
    let pending = Buffer.alloc(0);
    client.on('data', (chunk) => {
      pending = Buffer.concat([pending, chunk]);
      // Requests are framed by a 4-byte length; the API key is the next int16.
      while (pending.length >= 6) {
        const size = pending.readInt32BE(0);
        if (pending.length < 4 + size) break;
        const apiKey = pending.readInt16BE(4);
        const frame = pending.subarray(0, 4 + size);
        pending = pending.subarray(4 + size);
        if (apiKey === METADATA && left > 0) {
          left -= 1;
          client.resetAndDestroy();
          upstream.destroy();
          return;
        }
        upstream.write(frame);
      }
    });
    upstream.on('data', (chunk) => client.write(chunk));
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address() as net.AddressInfo;
  return {
    address: `127.0.0.1:${address.port}`,
    resetsLeft: () => left,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

test('kafkajs alone: a reset in the middle of subscribe fails the consumer start', {
  timeout: 60_000,
}, async (t) => {
  const topic = uniqueTopic('start-retry-raw');
  const setup = new KafkaClient({
    brokers: testBrokers(),
    clientId: 'start-retry',
    logger: testLogger(),
  });
  t.after(() => setup.close());
  await setup.ensureTopics([{ topic, partitions: 1, replicationFactor: 1 }]);
  const relay = await metadataResettingRelay(testBrokers()[0] as string, 1);
  t.after(() => relay.close());
  const consumer = new Kafka({ brokers: [relay.address], logLevel: 0 }).consumer({
    groupId: `${topic}.group`,
  });
  t.after(() => consumer.disconnect());
  await consumer.connect();
  const failure = await consumer.subscribe({ topics: [topic] }).then(
    () => undefined,
    (error: unknown) => error,
  );
  assert.ok(failure, 'subscribe failed on the reset');
  assert.ok(isRetriableKafkaError(failure), 'kafkajs marks it passing');
});

test("ferry's consumer joins after resets in the middle of its start", {
  timeout: 90_000,
}, async (t) => {
  const topic = uniqueTopic('start-retry');
  const logger = testLogger();
  const setup = new KafkaClient({ brokers: testBrokers(), clientId: 'start-retry', logger });
  t.after(() => setup.close());
  await setup.ensureTopics([{ topic, partitions: 1, replicationFactor: 1 }]);
  const relay = await metadataResettingRelay(testBrokers()[0] as string, 2);
  t.after(() => relay.close());
  const client = new KafkaClient({ brokers: [relay.address], clientId: 'start-retry', logger });
  t.after(() => client.close());
  const retries: number[] = [];
  const assigned: number[][] = [];
  const consumer = client.createBatchConsumer({
    groupId: `${topic}.group`,
    topic,
    sessionTimeoutMs: 10_000,
    onBatch: () => undefined,
    onAssignment: (partitions) => assigned.push([...partitions]),
    onStartRetry: (attempt) => retries.push(attempt),
  });
  t.after(() => consumer.stop());
  await consumer.start();
  assert.equal(relay.resetsLeft(), 0, 'the relay reset the metadata requests');
  assert.ok(retries.length >= 1, `the start was tried again (${retries.join(',')})`);
  assert.ok(consumer.running);
  assert.deepEqual(assigned.at(-1), [0]);
});

test('retryWhilePassing: passing errors are tried again, others and the deadline end it', async () => {
  let clock = 0;
  const sleep = async (ms: number) => {
    clock += ms;
  };
  const passing = Object.assign(new Error('reset'), { retriable: true });
  const wrapped = new Error('outer', { cause: passing });
  let calls = 0;
  let undone = 0;
  const value = await retryWhilePassing(
    async () => {
      calls += 1;
      if (calls < 3) throw calls === 1 ? passing : wrapped;
      return 'joined';
    },
    {
      sleep,
      now: () => clock,
      undo: async () => {
        undone += 1;
      },
    },
  );
  assert.equal(value, 'joined');
  assert.equal(calls, 3);
  assert.equal(undone, 2, 'each failed try is undone');

  const refusal = Object.assign(new Error('TOPIC_AUTHORIZATION_FAILED'), { retriable: false });
  calls = 0;
  await assert.rejects(
    retryWhilePassing(
      async () => {
        calls += 1;
        throw refusal;
      },
      { sleep, now: () => clock },
    ),
    /AUTHORIZATION/,
  );
  assert.equal(calls, 1, 'a refusal is not tried again');

  calls = 0;
  clock = 0;
  await assert.rejects(
    retryWhilePassing(
      async () => {
        calls += 1;
        throw passing;
      },
      { sleep, now: () => clock, deadlineMs: 10_000 },
    ),
    /reset/,
  );
  assert.ok(calls > 1 && clock >= 10_000, `tried until the deadline (${calls} tries, ${clock} ms)`);
});
