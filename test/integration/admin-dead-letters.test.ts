import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { DeadLetterReplay } from '../../src/admin/dead-letter-replay.ts';
import { DeadLetterReader } from '../../src/kafka/dead-letter-reader.ts';
import { type InboundRecord, KafkaClient } from '../../src/kafka/kafka-client.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { startAdmin } from '../admin/admin-fixture.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

const logger = createLogger({ level: 'silent' });

interface Letter {
  key: string;
  value: string;
  error: string;
}

const letters: Letter[] = [
  { key: '1', value: '{"type":"sms","id":1}', error: 'gateway request timed out' },
  { key: '2', value: '{"type":"viber","id":2}', error: 'gateway request timed out' },
  { key: '3', value: '{"type":"sms","id":3}', error: 'gateway unreachable (ECONNREFUSED)' },
  { key: '4', value: '{"type":"sms","id":4}', error: 'gateway request timed out' },
  { key: '5', value: 'not json', error: 'command is not JSON' },
  { key: '6', value: '{"type":"sms","id":6}', error: 'gateway request timed out' },
];

async function readCommands(
  kafka: KafkaClient,
  topic: string,
  expected: number,
): Promise<InboundRecord[]> {
  const consumer = kafka.createRecordConsumer({
    groupId: uniqueTopic('admin-dlq-check'),
    topics: [topic],
  });
  const records: InboundRecord[] = [];
  await consumer.start((record) => {
    records.push(record);
  });
  const deadline = Date.now() + 30_000;
  while (records.length < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  // A little longer, so a duplicate would show.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  await consumer.stop();
  return records;
}

describe('dead-letter replay against the broker', async () => {
  test('replays each dead letter once, with limit and filters, through the admin API', async (t) => {
    const brokers = testBrokers();
    const deadLetterTopic = uniqueTopic('ferry.dlq');
    const commandsTopic = uniqueTopic('ferry.commands');
    const kafka = new KafkaClient({ brokers, clientId: 'admin-dlq-test', logger });
    t.after(() => kafka.close());
    await kafka.ensureTopics([
      { topic: deadLetterTopic, partitions: 1, replicationFactor: 1 },
      { topic: commandsTopic, partitions: 1, replicationFactor: 1 },
    ]);
    const producer = kafka.createProducer();
    await producer.connect();
    t.after(() => producer.disconnect());
    await producer.send(
      letters.map((letter, index) => ({
        topic: deadLetterTopic,
        key: letter.key,
        value: letter.value,
        headers: {
          'ferry-error': letter.error,
          'ferry-source-topic': 'ferry.commands',
          'ferry-source-partition': '0',
          'ferry-source-offset': String(index),
          'trace-id': `trace-${letter.key}`,
        },
      })),
    );

    const reader = new DeadLetterReader({
      brokers,
      logger,
      deadLetterTopic,
      commandsTopic,
      progressGroupId: uniqueTopic('ferry.dlq-replay'),
    });
    t.after(() => reader.close());
    const { admin } = await startAdmin(t, { deadLetters: new DeadLetterReplay(reader) });
    const replay = (request: { limit?: number; errorContains?: string; type?: string }) =>
      admin.unary('replayDeadLetters', request, { timeoutMs: 60_000 });

    // Timed-out sms commands, two at most: 1 and 4; 2 is a viber, 3 another error.
    const first = await replay({ limit: 2, errorContains: 'TIMED OUT', type: 'sms' });
    assert.equal(first.replayed, 2);
    assert.equal(first.limitReached, true);
    assert.equal(first.skipped, 2);

    // The same filter again finds only 6.
    const second = await replay({ limit: 10, errorContains: 'timed out', type: 'sms' });
    assert.equal(second.replayed, 1);
    assert.equal(second.limitReached, false);

    // Everything left: 2, 3, 5; none of 1, 4, 6 again.
    const third = await replay({});
    assert.equal(third.replayed, 3);
    assert.equal(third.alreadyReplayed, 2, '4 and 6; 1 is behind the committed offset');

    const fourth = await replay({});
    assert.equal(fourth.replayed, 0);
    assert.equal(fourth.scanned, 0, 'progress moved past everything');

    const commands = await readCommands(kafka, commandsTopic, letters.length);
    assert.deepEqual(
      commands.map((r) => r.key?.toString()),
      ['1', '4', '6', '2', '3', '5'],
    );
    for (const record of commands) {
      const letter = letters.find((l) => l.key === record.key?.toString());
      assert.equal(record.value?.toString(), letter?.value);
      assert.deepEqual(record.headers, { 'trace-id': `trace-${letter?.key}` });
    }
  });
});

describe('dead-letter replay across the fleet', async () => {
  test('two replays at once, as on two replicas: each dead letter reaches the commands topic once; in-doubt ones wait for an explicit ask; headers are kept', async (t) => {
    const brokers = testBrokers();
    const deadLetterTopic = uniqueTopic('ferry.dlq');
    const commandsTopic = uniqueTopic('ferry.commands');
    const progressGroupId = uniqueTopic('ferry.dlq-replay');
    const kafka = new KafkaClient({ brokers, clientId: 'admin-dlq-fleet', logger });
    t.after(() => kafka.close());
    await kafka.ensureTopics([
      { topic: deadLetterTopic, partitions: 2, replicationFactor: 1 },
      { topic: commandsTopic, partitions: 1, replicationFactor: 1 },
    ]);
    const producer = kafka.createProducer();
    await producer.connect();
    t.after(() => producer.disconnect());
    const unsent = 2_500;
    await producer.send([
      ...Array.from({ length: unsent }, (_, index) => ({
        topic: deadLetterTopic,
        key: `u${index}`,
        value: JSON.stringify({ type: 'sms', id: index }),
        headers: {
          'ferry-error': 'gateway unreachable (ECONNREFUSED)',
          'ferry-delivery': 'unsent',
          'ferry-source-offset': String(index),
          'ferry-transport': 'async',
        },
      })),
      {
        topic: deadLetterTopic,
        key: 'doubt',
        value: JSON.stringify({ type: 'sms', id: 99_999 }),
        headers: { 'ferry-error': 'gateway request timed out', 'ferry-delivery': 'in_doubt' },
      },
    ]);
    // Two replicas: two readers of the same progress group, each with its own replayer.
    const replicas = [1, 2].map(() => {
      const reader = new DeadLetterReader({
        brokers,
        logger,
        deadLetterTopic,
        commandsTopic,
        progressGroupId,
      });
      t.after(() => reader.close());
      return new DeadLetterReplay(reader);
    });
    const outcomes = await Promise.allSettled(
      replicas.map((replay) => replay.replay({ limit: 100_000 })),
    );
    const done = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
    for (const outcome of outcomes) {
      if (outcome.status === 'rejected') {
        assert.match(String(outcome.reason), /another dead-letter replay took over/);
      }
    }
    assert.ok(done.length >= 1, 'one replay went through');
    // Whatever the earlier one left is for the next call; in-doubt still needs asking.
    const rest = await (replicas[0] as DeadLetterReplay).replay({ limit: 100_000 });
    const replayedSoFar = done.reduce((sum, o) => sum + o.replayed, 0) + rest.replayed;
    assert.equal(replayedSoFar, unsent, 'every proven-unsent dead letter, once');
    const doubt = await (replicas[1] as DeadLetterReplay).replay({
      limit: 10,
      includeInDoubt: true,
    });
    assert.equal(doubt.replayed, 1, 'the in-doubt one, when asked for');

    const commands = await readCommands(kafka, commandsTopic, unsent + 1);
    const keys = commands.map((r) => r.key?.toString() ?? '');
    assert.equal(keys.length, unsent + 1);
    assert.equal(new Set(keys).size, keys.length, 'no dead letter replayed twice');
    const sample = commands.find((r) => r.key?.toString() === 'u7');
    assert.deepEqual(sample?.headers, { 'ferry-transport': 'async' });
  });
});
