/**
 * A commit that comes after its replica gave the partition up (its batch waited behind
 * earlier ones of the partition, and the group moved the partition meanwhile) must not
 * happen. A new transactional producer would fence the partition's new owner and move
 * the group offset back under it: the new owner's next commit is refused, and what it
 * committed is read, sent and committed again.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { KafkaClient } from '../../src/kafka/kafka-client.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { PartitionTransactions } from '../../src/pipeline/partition-transactions.ts';
import { testLogger } from '../helpers/ferry.ts';
import { testBrokers, uniqueTopic } from '../helpers/kafka.ts';

test('a commit after the partition was given up neither fences its new owner nor moves its offset', {
  timeout: 60_000,
}, async (t) => {
  const topic = uniqueTopic('given-up');
  const results = `${topic}.results`;
  const group = `${topic}.group`;
  const logger = testLogger();
  const client = new KafkaClient({ brokers: testBrokers(), clientId: 'given-up-test', logger });
  t.after(() => client.close());
  await client.ensureTopics([
    { topic, partitions: 1, replicationFactor: 1 },
    { topic: results, partitions: 1, replicationFactor: 1 },
  ]);
  const replica = (name: string) => {
    const transactions = new PartitionTransactions({
      kafka: client,
      groupId: group,
      topic,
      // The same id on every replica: that is what lets the next owner fence the last.
      transactionalIdPrefix: 'given-up-test',
      logger: logger.child({ replica: name }),
      metrics: createMetrics(),
    });
    t.after(() => transactions.close());
    return transactions;
  };
  const commit = (transactions: PartitionTransactions, offset: string) =>
    transactions.commit({
      partition: 0,
      records: [{ topic: results, key: offset, value: `result before ${offset}` }],
      offset,
      metadata: null,
      mayRetry: async () => false,
    });

  const first = replica('first');
  await first.renew(0);
  assert.equal(await commit(first, '10'), 'committed');
  // The group moves the partition: the first replica closes its producer ...
  await first.close([0]);
  // ... and the second takes it over and commits further.
  const second = replica('second');
  await second.renew(0);
  assert.equal(await commit(second, '20'), 'committed');

  // An answered batch of the first replica's last assignment reaches its commit now.
  assert.equal(await commit(first, '15'), 'failed', 'the given-up partition does not commit');
  assert.equal(first.existing(0), undefined, 'and no producer was created for it');

  // EndTxn is answered before the markers are written; until then the group offset
  // reads as it was before the transaction.
  let offset = (await second.committed(0))?.offset;
  for (let tries = 0; offset === '10' && tries < 50; tries += 1) {
    await sleep(100);
    offset = (await second.committed(0))?.offset;
  }
  assert.equal(offset, '20', 'the group offset stays where the owner put it');
  assert.equal(await commit(second, '30'), 'committed', 'the owner was not fenced');
});
