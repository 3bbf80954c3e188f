import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FerryError } from '../../src/errors.ts';
import { judgeTopicSettings, topicConfigEntries } from '../../src/kafka/topic-settings.ts';

const expected = { partitions: 12, replicationFactor: 3, minInsyncReplicas: 2 };
const healthy = {
  topic: 'ferry.results',
  replicas: 3,
  minInsyncReplicas: 2,
  maxMessageBytes: 1_048_588,
  writtenByFerry: true,
};

test('topics as configured pass; weaker ones are warnings naming topic, setting and both values', () => {
  assert.deepEqual(judgeTopicSettings([healthy], expected, 1_000_000), []);
  const warnings = judgeTopicSettings(
    [
      {
        ...healthy,
        topic: 'ferry.commands',
        replicas: 2,
        minInsyncReplicas: 1,
        writtenByFerry: false,
      },
    ],
    expected,
    1_000_000,
  );
  assert.deepEqual(warnings, [
    { topic: 'ferry.commands', setting: 'replication.factor', actual: 2, expected: 3 },
    { topic: 'ferry.commands', setting: 'min.insync.replicas', actual: 1, expected: 2 },
  ]);
});

test('settings that cannot work are errors with code kafka_topic_settings', () => {
  const cases = [
    {
      topic: { ...healthy, minInsyncReplicas: 4 },
      message: /min\.insync\.replicas=4 but only 3 replicas/,
    },
    {
      topic: { ...healthy, maxMessageBytes: 500_000 },
      message: /max\.message\.bytes=500000, below FERRY_RECORD_MAX_BYTES=1000000/,
    },
  ];
  for (const { topic, message } of cases) {
    assert.throws(
      () => judgeTopicSettings([topic], expected, 1_000_000),
      (error: unknown) =>
        error instanceof FerryError &&
        error.code === 'kafka_topic_settings' &&
        message.test(error.message),
    );
  }
  // The commands topic holds what others write: its limit is not ferry's to check.
  assert.deepEqual(
    judgeTopicSettings(
      [{ ...healthy, maxMessageBytes: 500_000, writtenByFerry: false }],
      expected,
      1_000_000,
    ),
    [],
  );
});

test('topics ferry creates carry min.insync.replicas, and max.message.bytes only when configured', () => {
  assert.deepEqual(topicConfigEntries(expected), [{ name: 'min.insync.replicas', value: '2' }]);
  assert.deepEqual(topicConfigEntries({ ...expected, maxMessageBytes: 2_000_000 }), [
    { name: 'min.insync.replicas', value: '2' },
    { name: 'max.message.bytes', value: '2000000' },
  ]);
});
