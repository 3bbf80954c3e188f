/**
 * What one transactional producer per replica would save against one per partition, at a
 * steady command rate. `partitions` partitions receive `rate` commands/s in all (spread
 * evenly, each a record of ~300 bytes); a command's "result" is committed with its
 * partition's offset in a transaction:
 * - `per partition` (ferry today): each partition has its own transactional id; whatever
 *   arrived while its transaction was in flight goes in its next one;
 * - `shared`: one transactional id for all partitions; whatever arrived on any partition
 *   while the transaction was in flight goes in the next one, every partition's offset with it.
 * Both take turns in rounds of `seconds` each, in one process on one broker. Per way: the
 * transactions, commands per transaction, this process's CPU per command (the
 * read_committed reader's share included, alike for both), and from a command's arrival
 * until its record was readable at read_committed, p50/p99.
 *
 * `node bench/shared-transactions-probe.ts <broker> [rate=200] [seconds=10] [rounds=3] [partitions=6]`
 */
import { Kafka, logLevel } from 'kafkajs';
import { KafkaClient } from '../src/kafka/kafka-client.ts';
import type { TransactionalProducer } from '../src/kafka/producers.ts';
import type { OutboundRecord, PartitionOffset } from '../src/kafka/records.ts';
import { createLogger } from '../src/observability/logger.ts';
import { createTopicsAndWait } from './bench-context.ts';
import { quantile } from './stats.ts';
import { startReader } from './transaction-ceilings.ts';

const [broker = '127.0.0.1:9092', ...rest] = process.argv.slice(2);
const [rate = 200, seconds = 10, rounds = 3, partitions = 6] = rest.map(Number);

const prefix = `ferry-shared-probe-${Date.now()}`;
const topic = `${prefix}.results`;
const offsetsTopic = `${prefix}.offsets`;

interface Pending {
  readonly partition: number;
  readonly record: OutboundRecord;
}

/** Commits whatever is pending for its partitions, one transaction at a time. */
class Committer {
  readonly #producer: TransactionalProducer;
  #pending: Pending[] = [];
  #running: Promise<void> | undefined;
  #offset = 0;
  transactions = 0;
  constructor(producer: TransactionalProducer) {
    this.#producer = producer;
  }
  add(item: Pending): void {
    this.#pending.push(item);
    this.#running ??= this.#drain();
  }
  async #drain(): Promise<void> {
    while (this.#pending.length > 0) {
      const taken = this.#pending;
      this.#pending = [];
      const touched = [...new Set(taken.map((p) => p.partition))];
      this.#offset += 1;
      const offsets: PartitionOffset[] = touched.map((partition) => ({
        topic: offsetsTopic,
        partition,
        offset: String(this.#offset),
      }));
      await this.#producer.commit(
        taken.map((p) => p.record),
        prefix,
        offsets,
      );
      this.transactions += 1;
    }
    this.#running = undefined;
  }
  async idle(): Promise<void> {
    while (this.#running) await this.#running;
  }
}

const kafka = new Kafka({ clientId: prefix, brokers: [broker], logLevel: logLevel.NOTHING });
const admin = kafka.admin();
await admin.connect();
await createTopicsAndWait(
  admin,
  broker,
  [topic, offsetsTopic].map((t) => ({ topic: t, numPartitions: partitions, replicationFactor: 1 })),
);
const client = new KafkaClient({
  brokers: [broker],
  clientId: prefix,
  logger: createLogger({ level: 'silent' }),
});

async function producer(id: string): Promise<TransactionalProducer> {
  const p = client.createTransactionalProducer(`${prefix}-${id}`);
  await p.connect();
  return p;
}
const perPartition = await Promise.all(
  Array.from({ length: partitions }, (_, i) => producer(`p${i}`)),
);
const shared = await producer('shared');

interface Way {
  readonly name: string;
  readonly committerOf: (partition: number) => Committer;
  readonly committers: Committer[];
  readonly visible: number[];
  commands: number;
  cpuMicros: number;
}
const perPartitionCommitters = perPartition.map((p) => new Committer(p));
const sharedCommitter = new Committer(shared);
const ways: Way[] = [
  {
    name: 'per partition',
    committerOf: (partition) => perPartitionCommitters[partition] as Committer,
    committers: perPartitionCommitters,
    visible: [],
    commands: 0,
    cpuMicros: 0,
  },
  {
    name: 'shared',
    committerOf: () => sharedCommitter,
    committers: [sharedCommitter],
    visible: [],
    commands: 0,
    cpuMicros: 0,
  },
];

const reader = await startReader(kafka, topic);
let sequence = 0;
function command(way: Way, partition: number): void {
  sequence += 1;
  way.committerOf(partition).add({
    partition,
    record: {
      topic,
      key: `probe-${sequence}`,
      value: `{"at":${Date.now()},"pad":"${'x'.repeat(300)}"}`,
      partition,
    },
  });
}
// Warm-up: each producer's first transaction and the group's first offsets.
for (const way of ways) {
  for (let p = 0; p < partitions; p++) command(way, p);
  await Promise.all(way.committers.map((c) => c.idle()));
}
await new Promise((resolve) => setTimeout(resolve, 1_000));

const intervalMs = 1000 / rate;
for (let r = 0; r < rounds; r++) {
  for (const way of ways) {
    const transactionsBefore = way.committers.reduce((n, c) => n + c.transactions, 0);
    reader.delays.length = 0;
    const cpuBefore = process.cpuUsage();
    const started = performance.now();
    let sent = 0;
    while (performance.now() - started < seconds * 1000) {
      const due = Math.floor((performance.now() - started) / intervalMs);
      while (sent < due) {
        command(way, sent % partitions);
        sent += 1;
      }
      await new Promise((resolve) => setTimeout(resolve, Math.max(1, intervalMs / 2)));
    }
    await Promise.all(way.committers.map((c) => c.idle()));
    await new Promise((resolve) => setTimeout(resolve, 500));
    const cpu = process.cpuUsage(cpuBefore);
    way.cpuMicros += cpu.user + cpu.system;
    way.commands += sent;
    way.visible.push(...reader.delays);
    const transactions =
      way.committers.reduce((n, c) => n + c.transactions, 0) - transactionsBefore;
    console.log(
      `round ${r + 1} ${way.name}: ${sent} commands in ${transactions} transactions, CPU ${((cpu.user + cpu.system) / sent).toFixed(0)} µs/command`,
    );
  }
}
await reader.stop();
await Promise.all([...perPartition, shared].map((p) => p.disconnect()));
await client.close();
await admin.deleteTopics({ topics: [topic, offsetsTopic] }).catch(() => undefined);
await admin.disconnect();

console.log(
  `\n${rate} commands/s over ${partitions} partitions, ${rounds} rounds of ${seconds} s per way`,
);
for (const way of ways) {
  const transactions = way.committers.reduce((n, c) => n + c.transactions, 0);
  const v = [...way.visible].sort((a, b) => a - b);
  console.log(
    `${way.name.padEnd(14)} ${way.commands} commands, ${(way.commands / transactions).toFixed(2)} per transaction, CPU ${(way.cpuMicros / way.commands).toFixed(0)} µs/command, readable p50/p99 ${quantile(v, 0.5).toFixed(0)}/${quantile(v, 0.99).toFixed(0)} ms`,
  );
}
