import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { KafkaClient } from '../../src/kafka/kafka-client.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

const run = promisify(execFile);
const launcher = join(import.meta.dirname, '../../bin/ferryctl.mjs');

test('send sms produces the command and prints the result with the same key', async (t) => {
  const brokers = testBrokers();
  const commandsTopic = uniqueTopic('ferry.commands');
  const resultsTopic = uniqueTopic('ferry.results');
  const kafka = new KafkaClient({
    brokers,
    clientId: 'ferryctl-send-test',
    logger: createLogger({ level: 'silent' }),
  });
  t.after(() => kafka.close());
  await kafka.ensureTopics([
    { topic: commandsTopic, partitions: 1, replicationFactor: 1 },
    { topic: resultsTopic, partitions: 1, replicationFactor: 1 },
  ]);
  // Stands in for the daemon: answers each command with a result keyed like it.
  const producer = kafka.createProducer();
  await producer.connect();
  t.after(() => producer.disconnect());
  const commands: string[] = [];
  const responder = kafka.createRecordConsumer({
    groupId: uniqueTopic('responder'),
    topics: [commandsTopic],
  });
  t.after(() => responder.stop());
  await responder.start(async (record) => {
    const command = JSON.parse(record.value?.toString() ?? '{}') as { id: number; type: string };
    commands.push(record.value?.toString() ?? '');
    await producer.send([
      {
        topic: resultsTopic,
        key: record.key,
        value: JSON.stringify({
          id: command.id,
          type: command.type,
          success: true,
          stage: 'upstream',
          transport: 'sync',
          msg_id: 'm-1',
          parts: 1,
        }),
      },
    ]);
  });

  const { stdout } = await run(
    process.execPath,
    [
      launcher,
      'send',
      'sms',
      '--phone',
      '380501234567',
      '--text',
      'hello',
      '--sender',
      'ferry',
      '--id',
      '4242',
      '--brokers',
      brokers.join(','),
      '--commands-topic',
      commandsTopic,
      '--results-topic',
      resultsTopic,
      '--json',
      '--timeout-ms',
      '30000',
    ],
    { timeout: 60_000 },
  );
  const result = JSON.parse(stdout) as { id: number; success: boolean; msg_id: string };
  assert.deepEqual([result.id, result.success, result.msg_id], [4242, true, 'm-1']);
  assert.deepEqual(
    commands.map((c) => JSON.parse(c)),
    [{ type: 'sms', id: 4242, phone: 380501234567, sms_message: 'hello', sms_signature: 'ferry' }],
  );
});

test('send sms with a phone that breaks the contract exits 2 before touching Kafka', async () => {
  const outcome = await run(
    process.execPath,
    [launcher, 'send', 'sms', '--phone', '+380', '--text', 'x', '--sender', 'y'],
    { timeout: 30_000 },
  ).catch((error: unknown) => error as { code: number; stderr: string });
  assert.ok('code' in outcome);
  assert.equal(outcome.code, 2);
  assert.match(outcome.stderr, /phone/);
});
