import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { createTopicsAndWait, testBrokers, uniqueTopic } from '../helpers/kafka.ts';

// Proves the harness: the broker the test run owns takes a record and gives it back.
test('a record produced to the test broker is consumed back unchanged', async (t) => {
  const kafka = new Kafka({
    clientId: 'harness-test',
    brokers: testBrokers(),
    logLevel: logLevel.NOTHING,
  });
  const topic = uniqueTopic('harness');
  const admin = kafka.admin();
  await admin.connect();
  t.after(() => admin.disconnect());
  await createTopicsAndWait(admin, testBrokers(), [{ topic, numPartitions: 1 }]);

  const producer = kafka.producer();
  await producer.connect();
  t.after(() => producer.disconnect());
  await producer.send({ topic, messages: [{ key: 'k1', value: '{"hello":"kafka"}' }] });

  const consumer = kafka.consumer({ groupId: uniqueTopic('harness-group') });
  await consumer.connect();
  t.after(() => consumer.disconnect());
  await consumer.subscribe({ topic, fromBeginning: true });
  const received = await new Promise<{ key: string; value: string }>((resolve) => {
    void consumer.run({
      eachMessage: async ({ message }) =>
        resolve({ key: String(message.key), value: String(message.value) }),
    });
  });
  assert.deepEqual(received, { key: 'k1', value: '{"hello":"kafka"}' });
});
