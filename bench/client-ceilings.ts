/**
 * What the Kafka client alone can do on this machine and broker, next to the
 * end-to-end figures: kafkajs producing idempotently with acks=all (as ferry's
 * producer is configured) and consuming at read_committed, with no other work.
 * Kafka's own perf tools (Java client) are run the same way for comparison, and what a
 * transaction costs (transaction-ceilings.ts). It runs
 * after the scenarios, on fresh topics.
 */
import { Kafka, logLevel } from 'kafkajs';
import { type BenchContext, createTopics, takeCommands } from './bench-context.ts';
import { consumerPerf, ensurePerfToolJars, producerPerf } from './kafka-perf-tools.ts';
import {
  describeTransactionCeiling,
  measureTransactionCeilings,
  transactionCeilingName,
  transactionTopics,
} from './transaction-ceilings.ts';

export interface CeilingRow {
  readonly name: string;
  readonly recordsPerSecond: number;
  readonly note: string;
}

export interface CeilingFigures {
  readonly records: number;
  readonly rows: readonly CeilingRow[];
}

type Log = (line: string) => void;

/** Produces then consumes `records` bench commands with kafkajs alone. */
export async function measureClientCeilings(
  context: BenchContext,
  quick: boolean,
  log: Log,
): Promise<CeilingFigures> {
  const records = quick ? 100_000 : 200_000;
  const partitions = 6;
  const topic = `bench.${context.runId}.ceilings`;
  await createTopics(context, [topic], partitions);
  const kafka = new Kafka({
    clientId: 'ferry-bench-ceilings',
    brokers: [context.brokers],
    logLevel: logLevel.NOTHING,
  });
  const commands = takeCommands(context, records);
  const rows: CeilingRow[] = [];

  // kafkajs allows one request in flight per broker for an idempotent producer.
  const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await producer.connect();
  const chunk = 1000;
  const t0 = Date.now();
  try {
    for (let i = 0; i < commands.length; i += chunk) {
      await producer.send({
        topic,
        acks: -1,
        messages: commands.slice(i, i + chunk).map((c) => ({ key: c.key, value: c.value })),
      });
    }
  } finally {
    await producer.disconnect();
  }
  const produceSeconds = (Date.now() - t0) / 1000;
  rows.push({
    name: 'kafkajs produce, idempotent, acks=all, 1,000/request',
    recordsPerSecond: records / produceSeconds,
    note: `${records} records in ${produceSeconds.toFixed(2)} s`,
  });
  log(`  ${rows[0]?.name}: ${Math.round(records / produceSeconds)} records/s`);

  const consumer = kafka.consumer({
    groupId: `${topic}.group`,
    readUncommitted: false,
    maxWaitTimeInMs: 50,
  });
  // From joining the group (fetching starts) to the last batch handed over.
  let joinedAtMs = Number.NaN;
  consumer.on(consumer.events.GROUP_JOIN, () => {
    joinedAtMs = Date.now();
  });
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  let seen = 0;
  let lastAtMs = Number.NaN;
  const done = new Promise<void>((resolve) => {
    void consumer.run({
      autoCommit: false,
      eachBatch: async ({ batch }) => {
        seen += batch.messages.length;
        lastAtMs = Date.now();
        if (seen >= records) resolve();
      },
    });
  });
  const timeout = new Promise<void>((resolve) => setTimeout(resolve, 120_000).unref());
  await Promise.race([done, timeout]);
  await consumer.disconnect();
  const consumeSeconds = Math.max(0.001, (lastAtMs - joinedAtMs) / 1000);
  rows.push({
    name: 'kafkajs consume, read_committed, eachBatch no-op',
    recordsPerSecond: seen / consumeSeconds,
    note: `${seen} records, group joined to last batch ${consumeSeconds.toFixed(2)} s`,
  });
  log(`  ${rows[1]?.name}: ${Math.round(seen / consumeSeconds)} records/s`);

  const transactions = await measureTransactionCeilings({
    brokers: context.brokers,
    prefix: `${topic}.transactions`,
    ids: partitions,
    transactionsPerId: quick ? 30 : 100,
    recordsPerTransaction: 10,
  });
  context.createdTopics.push(...transactionTopics(`${topic}.transactions`));
  for (const row of transactions) {
    rows.push({
      name: transactionCeilingName(row, partitions),
      recordsPerSecond: row.transactionsPerSecond,
      note: describeTransactionCeiling(row),
    });
    log(
      `  ${transactionCeilingName(row, partitions)}: ${Math.round(row.transactionsPerSecond)}, ${describeTransactionCeiling(row)}`,
    );
  }

  const recordSize = Math.round(
    commands.reduce((sum, c) => sum + c.key.length + c.value.length, 0) / commands.length,
  );
  try {
    await ensurePerfToolJars();
    const javaTopic = `${topic}.java`;
    await createTopics(context, [javaTopic], partitions);
    const produced = await producerPerf(context.brokers, javaTopic, records, recordSize);
    rows.push({
      name: 'kafka-producer-perf-test, idempotent, acks=all',
      recordsPerSecond: produced,
      note: `${records} records of ${recordSize} bytes`,
    });
    const consumed = await consumerPerf(context.brokers, javaTopic, records, context.logsDir);
    rows.push({
      name: 'kafka-consumer-perf-test, read_committed',
      recordsPerSecond: consumed,
      note: 'fetch.nMsg.sec (after the rebalance)',
    });
    log(
      `  Java perf tools: produce ${Math.round(produced)}, consume ${Math.round(consumed)} records/s`,
    );
  } catch (error: unknown) {
    log(`  Kafka perf tools not run: ${error instanceof Error ? error.message : String(error)}`);
  }
  return { records, rows };
}
