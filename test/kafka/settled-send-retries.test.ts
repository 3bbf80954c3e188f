/**
 * kafkajs's own produce logic (its sendMessages.js, unchanged) over two leader brokers:
 * broker 2 refuses the first request at once while broker 1's answer takes 50 ms. kafkajs
 * alone retries before broker 1 has answered and sends broker 1 the same record again,
 * under the next sequence number (a real broker writes it twice: seen on a cluster with
 * leaders killed, one transaction holding 19 results twice). Wrapped by
 * withSettledRetries, the retry waits for broker 1's answer and sends broker 2's record
 * alone, under its first sequence number. The brokers here are scripted stand-ins for
 * kafkajs's broker objects: what is under test is kafkajs's retry logic; the cluster
 * run of `make chaos` drives the same code against real brokers.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import {
  kafkajsSendMessages,
  type SendMessagesFactory,
  withSettledRetries,
} from '../../src/kafka/settled-send-retries.ts';

const require = createRequire(import.meta.url);
const createRetry = require('kafkajs/src/retry/index.js') as (options: object) => never;
const { KafkaJSConnectionError } = require('kafkajs/src/errors.js') as {
  KafkaJSConnectionError: new (message: string) => Error;
};
const root = resolve(import.meta.dirname, '../..');

interface ProduceCall {
  readonly nodeId: number;
  readonly partition: number;
  readonly firstSequence: number;
}

/** Two leaders (partition 0 on node 1, partition 1 on node 2) and kafkajs's own retrier. */
/**
 * `leaderAfterRefusal`: where partitions lead once node 2 has refused (a leader move seen by
 * the retry's metadata); by default nothing moves.
 */
function twoBrokers(leaderAfterRefusal?: (partition: number) => number) {
  const calls: ProduceCall[] = [];
  let node2Refusals = 1;
  const broker = (nodeId: number) => ({
    nodeId,
    async produce({
      topicData,
    }: {
      topicData: { partitions: { partition: number; firstSequence: number }[] }[];
    }) {
      for (const { partitions } of topicData) {
        for (const { partition, firstSequence } of partitions) {
          calls.push({ nodeId, partition, firstSequence });
        }
      }
      if (nodeId === 2 && node2Refusals-- > 0)
        throw new KafkaJSConnectionError('connection refused');
      if (nodeId === 1) await new Promise((r) => setTimeout(r, 50));
      if (nodeId === 3) await new Promise((r) => setTimeout(r, 1_000));
      return {
        topics: topicData.map(({ partitions }) => ({
          topicName: 't',
          partitions: partitions.map(({ partition }) => ({
            partition,
            errorCode: 0,
            baseOffset: '0',
            logAppendTime: '-1',
            logStartOffset: '0',
          })),
        })),
      };
    },
  });
  const brokers = new Map([
    [1, broker(1)],
    [2, broker(2)],
    [3, broker(3)],
  ]);
  const cluster = {
    targetTopics: new Set(['t']),
    async refreshMetadataIfNecessary() {},
    async refreshMetadata() {},
    async addMultipleTargetTopics() {},
    isConnected: () => true,
    findTopicPartitionMetadata: () => [
      { partitionId: 0, leader: 1 },
      { partitionId: 1, leader: 2 },
      { partitionId: 2, leader: 3 },
    ],
    findLeaderForPartitions: (_topic: string, partitions: string[]) => {
      const byLeader: Record<string, number[]> = {};
      for (const p of partitions.map(Number)) {
        const moved = node2Refusals <= 0 && leaderAfterRefusal;
        const leader = String(moved ? leaderAfterRefusal(p) : p + 1);
        byLeader[leader] = [...(byLeader[leader] ?? []), p];
      }
      return byLeader;
    },
    findBroker: async ({ nodeId }: { nodeId: string }) => brokers.get(Number(nodeId)),
  };
  const sequences = new Map<string, number>();
  const locks = new Map<number, Promise<void>>();
  const releases = new Map<number, () => void>();
  const eosManager = {
    isTransactional: () => false,
    isInitialized: () => true,
    getTransactionalId: () => undefined,
    getProducerId: () => 1,
    getProducerEpoch: () => 0,
    getSequence: (topic: string, partition: number) => sequences.get(`${topic}/${partition}`) ?? 0,
    updateSequence(topic: string, partition: number, increment: number) {
      sequences.set(`${topic}/${partition}`, this.getSequence(topic, partition) + increment);
    },
    async acquireBrokerLock({ nodeId }: { nodeId: number }) {
      while (locks.has(nodeId)) await locks.get(nodeId);
      locks.set(nodeId, new Promise<void>((r) => releases.set(nodeId, r)));
    },
    releaseBrokerLock({ nodeId }: { nodeId: number }) {
      locks.delete(nodeId);
      releases.get(nodeId)?.();
    },
  };
  const logger = { debug() {}, info() {}, warn() {}, error() {} };
  const options = {
    logger,
    cluster,
    eosManager,
    partitioner: ({ message }: { message: { partition: number } }) => message.partition,
    retrier: createRetry({ retries: 5, initialRetryTime: 1, maxRetryTime: 5 }),
  };
  const messages = [
    { key: 'a', value: 'to node 1', partition: 0 },
    { key: 'b', value: 'to node 2', partition: 1 },
  ];
  const sendWith = (send: ReturnType<SendMessagesFactory>, toSend = messages) =>
    send({
      acks: -1,
      timeout: 1000,
      compression: 0,
      topicMessages: [{ topic: 't', messages: toSend }],
    });
  const send = async (factory: SendMessagesFactory) => {
    await sendWith(factory(options as never));
    return calls;
  };
  /** The same send, while another send of the same producer waits 1 s for node 3. */
  const sendBesideSlowOne = async (factory: SendMessagesFactory) => {
    const producerSend = factory(options as never);
    const slow = sendWith(producerSend, [{ key: 'c', value: 'to node 3', partition: 2 }]);
    const started = performance.now();
    await sendWith(producerSend);
    const ms = performance.now() - started;
    await slow;
    return ms;
  };
  return { send, sendBesideSlowOne };
}

test('kafkajs alone sends a record again under the next sequence number while its first request is out', async () => {
  assert.ok(kafkajsSendMessages, 'kafkajs sendMessages.js is where it was');
  const calls = await twoBrokers().send(kafkajsSendMessages);
  const toNode1 = calls.filter((c) => c.nodeId === 1);
  assert.deepEqual(
    toNode1.map((c) => c.firstSequence),
    [0, 1],
    'the shortfall: node 1 got its one record twice, the second time as a new record',
  );
});

test('with settled retries each record reaches its broker once, a refused one again under the same sequence number', async () => {
  assert.ok(kafkajsSendMessages);
  const calls = await twoBrokers().send(withSettledRetries(kafkajsSendMessages));
  assert.deepEqual(
    calls.filter((c) => c.nodeId === 1).map((c) => c.firstSequence),
    [0],
  );
  assert.deepEqual(
    calls.filter((c) => c.nodeId === 2).map((c) => c.firstSequence),
    [0, 0],
  );
});

test('a partition acknowledged before its leader moved is not sent again by the retry', async () => {
  assert.ok(kafkajsSendMessages);
  // Node 1 answers partition 0, node 2 refuses partition 1, then both move to node 3.
  const alone = await twoBrokers(() => 3).send(kafkajsSendMessages);
  assert.deepEqual(
    alone.filter((c) => c.partition === 0).map((c) => [c.nodeId, c.firstSequence]),
    [
      [1, 0],
      [3, 1],
    ],
    'the shortfall: kafkajs sends partition 0 again, as new records, to its new leader',
  );
  const calls = await twoBrokers(() => 3).send(withSettledRetries(kafkajsSendMessages));
  assert.deepEqual(
    calls.map((c) => [c.nodeId, c.partition, c.firstSequence]),
    [
      [1, 0, 0],
      [2, 1, 0],
      [3, 1, 0],
    ],
  );
});

test('a retry waits for its own send’s requests, not for another send of the same producer', async () => {
  assert.ok(kafkajsSendMessages);
  const ms = await twoBrokers().sendBesideSlowOne(withSettledRetries(kafkajsSendMessages));
  assert.ok(ms < 600, `the send took ${ms.toFixed(0)} ms beside a send waiting 1,000 ms`);
});

test('the daemon’s producers send through settled retries', async () => {
  const script = [
    "await import('./src/daemon.ts');",
    "const { settledRetriesInstalled } = await import('./src/kafka/settled-send-retries.ts');",
    "const { groupingReplaced } = await import('./src/kafka/kafkajs-grouping.ts');",
    "process.stdout.write(String(settledRetriesInstalled()) + ' ' + String(groupingReplaced()));",
  ].join('\n');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', script],
    { cwd: root },
  );
  assert.equal(stdout, 'true true');
});
