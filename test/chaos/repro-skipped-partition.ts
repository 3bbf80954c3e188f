/**
 * Reproduction of a finding of the cluster run (docs/chaos.md, "The cluster run"):
 * kafkajs retries a produce request that failed because its leader died, but skips
 * on the retry every broker that answered the first attempt — also when the failed
 * partitions have moved onto one of them. The send resolves; those records were
 * never written. On a three-node cluster, three writers send keyed batches over all
 * six partitions, one after another, while the node leading most of
 * them is killed: a plain kafkajs idempotent producer (acks=all), ferry's
 * RecordProducer, and ferry's TransactionalProducer committing each batch with a
 * group offset, as the pipeline does. Every key a writer was told was written is
 * looked for in its topic, read back at read_committed.
 *
 * Run: node test/chaos/repro-skipped-partition.ts — exits 1 when one of ferry's
 * producers lost a record, 0 otherwise; prints what plain kafkajs lost.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel } from 'kafkajs';
import { KafkaClient, type OutboundRecord } from '../../src/kafka/kafka-client.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { KafkaCluster } from '../../tools/kafka/cluster.ts';
import { createTopics, readTopic } from './chaos-kafka.ts';
import { killOnExit } from './ferry-replicas.ts';

const PARTITIONS = 6;
const BATCH = 60;
const WRITERS = ['plain', 'ferry', 'ferry-transactional'] as const;
type Writer = (typeof WRITERS)[number];
const log = (line: string) => process.stdout.write(`# ${line}\n`);

const dir = await mkdtemp(join(tmpdir(), 'ferry-repro-skipped-'));
let cluster: KafkaCluster | undefined;
const removeExitHook = killOnExit(() => cluster?.pids() ?? []);
let exitCode = 2;
try {
  cluster = await KafkaCluster.start({ dir, heapMb: 384 });
  const { brokers } = cluster;
  await createTopics(brokers, [...WRITERS], PARTITIONS, {}, 3);
  const plain = new Kafka({ brokers: brokers.split(','), logLevel: logLevel.NOTHING }).producer({
    idempotent: true,
    maxInFlightRequests: 1,
  });
  let resendWarnings = 0;
  const ferryKafka = new KafkaClient({
    brokers: brokers.split(','),
    clientId: 'repro',
    logger: createLogger({ level: 'silent' }),
    onError: (_client, kind) => {
      if (kind === 'unacknowledged_partitions') resendWarnings += 1;
    },
  });
  const ferry = ferryKafka.createProducer();
  const transactional = ferryKafka.createTransactionalProducer('repro-transactional');
  await Promise.all([plain.connect(), ferry.connect(), transactional.connect()]);

  let running = true;
  /** Keys each writer was told were written; a send that threw counts for nothing. */
  const acknowledged: Record<Writer, string[]> = {
    plain: [],
    ferry: [],
    'ferry-transactional': [],
  };
  const failures: Record<Writer, number> = { plain: 0, ferry: 0, 'ferry-transactional': 0 };
  const firstError: Partial<Record<Writer, string>> = {};
  const send: Record<Writer, (records: OutboundRecord[]) => Promise<unknown>> = {
    plain: (records) =>
      plain.sendBatch({
        acks: -1,
        topicMessages: [
          { topic: 'plain', messages: records.map(({ key, value }) => ({ key, value })) },
        ],
      }),
    ferry: (records) => ferry.send(records),
    'ferry-transactional': (records) =>
      transactional.commit(records, 'repro-group', [
        {
          topic: 'plain',
          partition: 0,
          offset: String(acknowledged['ferry-transactional'].length),
        },
      ]),
  };
  const loop = async (writer: Writer) => {
    for (let n = 0; running; n += 1) {
      const records = Array.from({ length: BATCH }, (_, i) => ({
        topic: writer,
        key: `${writer}-${n}-${i}`,
        value: 'x',
      }));
      try {
        await send[writer](records);
        acknowledged[writer].push(...records.map((r) => r.key));
      } catch (error: unknown) {
        // The pipeline retries a failed commit; here it only means these keys prove nothing.
        failures[writer] += 1;
        firstError[writer] ??= error instanceof Error ? error.message : String(error);
        await sleep(500);
      }
      // A short pause, so that no writer takes the CPU from the others.
      await sleep(20);
    }
  };
  const loops = WRITERS.map((writer) => loop(writer));
  await sleep(3_000);
  const leaders = await cluster.partitionLeaders('plain');
  const counts = new Map<number, number>();
  for (const node of leaders.values()) counts.set(node, (counts.get(node) ?? 0) + 1);
  const victim = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 1;
  log(`kill -9 node ${victim}, leader of ${counts.get(victim)} of ${PARTITIONS} partitions`);
  await cluster.kill9(victim);
  await sleep(25_000);
  running = false;
  await Promise.all(loops);
  await Promise.all([plain.disconnect(), ferry.disconnect(), transactional.disconnect()]);
  await ferryKafka.close();

  const lost: Record<Writer, number> = { plain: 0, ferry: 0, 'ferry-transactional': 0 };
  for (const writer of WRITERS) {
    const keys = new Set(acknowledged[writer]);
    const read = await readTopic(
      brokers,
      writer,
      (records) => records.filter((r) => keys.has(r.key)).length >= keys.size,
      { timeoutMs: 30_000, settleMs: 500 },
    ).catch(() => readTopic(brokers, writer, () => true, { timeoutMs: 5_000, settleMs: 3_000 }));
    const found = new Set(read.map((r) => r.key));
    lost[writer] = acknowledged[writer].filter((key) => !found.has(key)).length;
    log(
      `${writer}: ${keys.size} records acknowledged (${failures[writer]} sends failed and were not counted${failures[writer] > 0 ? `, the first: ${firstError[writer]}` : ''}), ${lost[writer]} of them not in the topic`,
    );
  }
  log(`ferry's producers sent unacknowledged partitions again ${resendWarnings} times`);
  const ferryLost = lost.ferry > 0 || lost['ferry-transactional'] > 0;
  exitCode = ferryLost ? 1 : 0;
  log(ferryLost ? "PROBLEM: one of ferry's producers lost records" : 'ok: ferry lost nothing');
} catch (error: unknown) {
  process.stderr.write(`repro failed: ${error instanceof Error ? error.stack : String(error)}\n`);
} finally {
  await cluster?.stop(5_000);
  removeExitHook();
  await rm(dir, { recursive: true, force: true });
}
process.exit(exitCode);
