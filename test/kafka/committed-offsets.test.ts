/**
 * The group offsets a takeover reads. kafkajs asks the coordinator only for the
 * partitions its cluster metadata lists; while a refresh for another topic has left the
 * commands topic out (seen in `make chaos` when the dedupe topic was read at three
 * takeovers at once), it asks for none and answers an empty list, which reads as a group
 * that never committed. That answer is refused, so the takeover tries again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KafkaAdmin } from '../../src/kafka/kafka-admin.ts';
import type { Kafka } from '../../src/kafka/kafkajs.ts';

function adminAnswering(answer: unknown): KafkaAdmin {
  const admin = { connect: async () => undefined, fetchOffsets: async () => answer };
  const kafka = { admin: () => admin } as unknown as Kafka;
  return new KafkaAdmin(kafka, { brokers: ['127.0.0.1:9'] }, () => undefined);
}

test('committed offsets without the partitions of the topic are refused, not read as none', async () => {
  await assert.rejects(
    adminAnswering([{ topic: 'commands', partitions: [] }]).committedOffsets('g', 'commands'),
    /came back without its partitions/,
  );
  await assert.rejects(adminAnswering([]).committedOffsets('g', 'commands'));
});

test('a partition that never committed is still there, at offset -1', async () => {
  const offsets = await adminAnswering([
    {
      topic: 'commands',
      partitions: [
        { partition: 0, offset: '12', metadata: 'm' },
        { partition: 1, offset: '-1', metadata: null },
      ],
    },
  ]).committedOffsets('g', 'commands');
  assert.equal(offsets.get(0)?.offset, '12');
  assert.equal(offsets.get(0)?.metadata, 'm');
  assert.equal(offsets.get(1)?.offset, '-1');
});
