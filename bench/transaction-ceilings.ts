/**
 * What one transaction costs on this broker: several transactional ids committing back
 * to back at once (as ferry's per-partition producers do under load), each transaction
 * a few records and the group offset, with a reader at read_committed timing when each
 * record became readable. Three runs, each on a fresh topic:
 * - plain kafkajs (records, offsets, commit, as its documentation shows), every
 *   transaction's records spread over all partitions, as keys hash;
 * - ferry's transactional producer (offsets first, a busy coordinator retried by ferry,
 *   coordinators remembered), records spread the same way (`FERRY_RESULTS_PARTITIONING=key`);
 * - ferry's producer, each id's records in one partition of its own (`source`): a
 *   partition's records then wait for no other id's transaction to become readable.
 * Counts the requests each sent per transaction, from kafkajs's instrumentation.
 *
 * Alone: `node bench/transaction-ceilings.ts <broker> [transactions per id]`.
 */
import { Kafka, logLevel, Partitioners } from 'kafkajs';
import { KafkaClient, TRANSACTION_RETRY } from '../src/kafka/kafka-client.ts';
import type { OutboundRecord } from '../src/kafka/records.ts';
import { createLogger } from '../src/observability/logger.ts';
import { createTopicsAndWait } from './bench-context.ts';
import { quantile } from './stats.ts';

export type TransactionClient = 'kafkajs' | 'ferry';
/** `spread`: a transaction's records over every partition; `own`: all in its id's partition. */
export type RecordPlacement = 'spread' | 'own';

export interface TransactionCeiling {
  readonly client: TransactionClient;
  readonly placement: RecordPlacement;
  readonly transactionsPerSecond: number;
  /** From a transaction's start until it returned. */
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** From a transaction's start until the reader at read_committed had its record. */
  readonly visibleP50Ms: number;
  readonly visibleP99Ms: number;
  /** Requests per transaction by kafkajs's API name. */
  readonly requestsPerTransaction: Readonly<Record<string, number>>;
}

export interface TransactionCeilingOptions {
  readonly brokers: string;
  /** Prefix of the topics, groups and transactional ids created. */
  readonly prefix: string;
  /** Transactional ids committing at once (ferry: one per input partition), and partitions. */
  readonly ids: number;
  readonly transactionsPerId: number;
  readonly recordsPerTransaction: number;
}

/** One transactional id's commit function, and how to close it. */
interface Committer {
  readonly commit: (round: number, records: OutboundRecord[]) => Promise<void>;
  readonly close: () => Promise<void>;
}

/** Requests counted by kafkajs's API name. */
type RequestCounts = Map<string, number>;

interface Run {
  readonly client: TransactionClient;
  readonly placement: RecordPlacement;
  readonly topic: string;
  /** Where the transactions' offsets go (a topic of `ids` partitions) and for which group. */
  readonly offsetsTopic: string;
  readonly groupId: string;
}

function recordsOf(run: Run, options: TransactionCeilingOptions, id: number, round: number) {
  const at = Date.now();
  return Array.from({ length: options.recordsPerTransaction }, (_, i) => ({
    topic: run.topic,
    key: `ceiling-${id}-${round}-${i}`,
    value: `{"at":${at},"pad":"${'x'.repeat(200)}"}`,
    partition: run.placement === 'own' ? id : i % options.ids,
  }));
}

async function plainCommitter(
  run: Run,
  options: TransactionCeilingOptions,
  id: number,
  count: (api: string) => void,
): Promise<Committer> {
  const kafka = new Kafka({
    clientId: 'ferry-bench-transactions',
    brokers: [options.brokers],
    logLevel: logLevel.NOTHING,
    retry: TRANSACTION_RETRY,
  });
  const producer = kafka.producer({
    transactionalId: `${run.groupId}-${id}`,
    idempotent: true,
    maxInFlightRequests: 1,
    createPartitioner: Partitioners.DefaultPartitioner,
  });
  producer.on(producer.events.REQUEST, (event) => count(event.payload.apiName));
  await producer.connect();
  return {
    commit: async (round, records) => {
      const transaction = await producer.transaction();
      await transaction.sendBatch({
        topicMessages: [
          {
            topic: run.topic,
            messages: records.map((r) => ({
              key: r.key,
              value: r.value,
              partition: r.partition ?? 0,
            })),
          },
        ],
        acks: -1,
      });
      await transaction.sendOffsets({
        consumerGroupId: run.groupId,
        topics: [
          { topic: run.offsetsTopic, partitions: [{ partition: id, offset: String(round) }] },
        ],
      });
      await transaction.commit();
    },
    close: () => producer.disconnect(),
  };
}

async function ferryCommitter(client: KafkaClient, run: Run, id: number): Promise<Committer> {
  const producer = client.createTransactionalProducer(`${run.groupId}-${id}`);
  await producer.connect();
  return {
    commit: (round, records) =>
      producer.commit(records, run.groupId, [
        { topic: run.offsetsTopic, partition: id, offset: String(round) },
      ]),
    close: () => producer.disconnect(),
  };
}

/**
 * A read_committed reader of `topic` noting, for each record, how long after the time in
 * its value (`"at":<ms>`) it was read.
 */
export async function startReader(kafka: Kafka, topic: string, maxWaitTimeInMs = 10) {
  const delays: number[] = [];
  const consumer = kafka.consumer({
    groupId: `${topic}.reader`,
    readUncommitted: false,
    maxWaitTimeInMs,
  });
  let joined: () => void = () => undefined;
  const hasJoined = new Promise<void>((resolve) => {
    joined = resolve;
  });
  consumer.on(consumer.events.GROUP_JOIN, () => joined());
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  void consumer.run({
    autoCommit: false,
    eachBatch: async ({ batch }) => {
      const now = Date.now();
      for (const message of batch.messages) {
        const at = Number(/"at":(\d+)/.exec(message.value?.toString('latin1') ?? '')?.[1]);
        if (Number.isFinite(at)) delays.push(now - at);
      }
    },
  });
  await hasJoined;
  return { delays, stop: () => consumer.disconnect() };
}

async function measure(
  run: Run,
  options: TransactionCeilingOptions,
  kafka: Kafka,
  requests: RequestCounts,
  committer: (id: number) => Promise<Committer>,
): Promise<TransactionCeiling> {
  const committers = await Promise.all(
    Array.from({ length: options.ids }, (_, id) => committer(id)),
  );
  // The first transaction of each id (and the group's first offsets) is left out.
  await Promise.all(committers.map((c, id) => c.commit(0, recordsOf(run, options, id, 0))));
  const reader = await startReader(kafka, run.topic);
  reader.delays.length = 0;
  requests.clear();
  const durations: number[] = [];
  const startedAt = performance.now();
  try {
    await Promise.all(
      committers.map(async (c, id) => {
        for (let round = 1; round <= options.transactionsPerId; round++) {
          const began = performance.now();
          await c.commit(round, recordsOf(run, options, id, round));
          durations.push(performance.now() - began);
        }
      }),
    );
  } finally {
    await Promise.all(committers.map((c) => c.close()));
  }
  const seconds = (performance.now() - startedAt) / 1000;
  const transactions = options.ids * options.transactionsPerId;
  const expected = transactions * options.recordsPerTransaction;
  const deadline = Date.now() + 10_000;
  // The records of the warm-up transactions may be read too, once: at least `expected`.
  while (reader.delays.length < expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await reader.stop();
  durations.sort((a, b) => a - b);
  const visible = [...reader.delays].sort((a, b) => a - b);
  return {
    client: run.client,
    placement: run.placement,
    transactionsPerSecond: transactions / seconds,
    p50Ms: quantile(durations, 0.5),
    p99Ms: quantile(durations, 0.99),
    visibleP50Ms: quantile(visible, 0.5),
    visibleP99Ms: quantile(visible, 0.99),
    requestsPerTransaction: Object.fromEntries(
      [...requests].map(([api, n]) => [api, Math.round((n / transactions) * 100) / 100]),
    ),
  };
}

const RUNS = [
  ['kafkajs', 'spread'],
  ['ferry', 'spread'],
  ['ferry', 'own'],
] as const;

/** The topics a measurement with this prefix creates (for the bench to delete). */
export function transactionTopics(prefix: string): string[] {
  return [
    `${prefix}.offsets`,
    ...RUNS.map(([client, placement]) => `${prefix}.${client}-${placement}`),
  ];
}

/** Plain kafkajs, then ferry's producer with records spread and in their own partition. */
export async function measureTransactionCeilings(
  options: TransactionCeilingOptions,
): Promise<TransactionCeiling[]> {
  const kafka = new Kafka({
    clientId: 'ferry-bench-transactions',
    brokers: [options.brokers],
    logLevel: logLevel.NOTHING,
  });
  const admin = kafka.admin();
  await admin.connect();
  const runs: Run[] = RUNS.map(([client, placement]) => ({
    client,
    placement,
    topic: `${options.prefix}.${client}-${placement}`,
    offsetsTopic: `${options.prefix}.offsets`,
    groupId: `${options.prefix}.${client}-${placement}`,
  }));
  const requests: RequestCounts = new Map();
  const count = (api: string) => {
    requests.set(api, (requests.get(api) ?? 0) + 1);
  };
  const client = new KafkaClient({
    brokers: [options.brokers],
    clientId: 'ferry-bench-transactions',
    logger: createLogger({ level: 'silent' }),
    onTransactionalRequest: count,
  });
  try {
    await createTopicsAndWait(
      admin,
      options.brokers,
      transactionTopics(options.prefix).map((topic) => ({
        topic,
        numPartitions: options.ids,
        replicationFactor: 1,
      })),
    );
    const rows: TransactionCeiling[] = [];
    for (const run of runs) {
      rows.push(
        await measure(run, options, kafka, requests, (id) =>
          run.client === 'ferry'
            ? ferryCommitter(client, run, id)
            : plainCommitter(run, options, id, count),
        ),
      );
    }
    return rows;
  } finally {
    await client.close();
    await admin.disconnect();
  }
}

/** The row's name in the ceilings table. */
export function transactionCeilingName(row: TransactionCeiling, ids: number): string {
  const who = row.client === 'ferry' ? 'ferry' : 'kafkajs';
  const where = row.placement === 'own' ? 'own partition' : 'spread';
  return `${who} transactions, ${ids} ids, ${where} (txn/s)`;
}

/** Latency, readability and the requests that are not one per transaction. */
export function describeTransactionCeiling(row: TransactionCeiling): string {
  const per = row.requestsPerTransaction;
  const total = Object.values(per).reduce((sum, n) => sum + n, 0);
  const notable = ['GroupCoordinator', 'Metadata', 'AddPartitionsToTxn', 'AddOffsetsToTxn']
    .map(
      (api) =>
        `${api === 'GroupCoordinator' ? 'FindCoordinator' : api} ${(per[api] ?? 0).toFixed(2)}`,
    )
    .join(', ');
  return (
    `txn p50 ${row.p50Ms.toFixed(1)} p99 ${row.p99Ms.toFixed(1)} ms, readable p50 ` +
    `${row.visibleP50Ms.toFixed(0)} p99 ${row.visibleP99Ms.toFixed(0)} ms; ` +
    `${total.toFixed(1)} requests/txn (${notable})`
  );
}

if (import.meta.main) {
  const [brokers = '127.0.0.1:9092', perId = '100'] = process.argv.slice(2);
  const ids = 6;
  const rows = await measureTransactionCeilings({
    brokers,
    prefix: `bench.transactions.${Date.now()}`,
    ids,
    transactionsPerId: Number(perId),
    recordsPerTransaction: 10,
  });
  for (const row of rows) {
    process.stdout.write(
      `${transactionCeilingName(row, ids).padEnd(56)} ${Math.round(row.transactionsPerSecond)}  ${describeTransactionCeiling(row)}\n`,
    );
  }
}
