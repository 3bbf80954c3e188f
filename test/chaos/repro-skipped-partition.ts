/**
 * Reproduction of a finding of the cluster run (docs/chaos.md, "The cluster run"):
 * kafkajs retries a produce request that failed because its leader died, but skips
 * on the retry every broker that answered the first attempt — also when the failed
 * partitions have moved onto one of them. The send resolves; those records were
 * never written. On a three-node cluster, two idempotent producers (acks=all) write
 * keyed batches over all six partitions while the node leading most of them is
 * killed: plain kafkajs, and the same producer sending through ferry's check
 * (src/kafka/acknowledged-send.ts). Records acknowledged are compared with records
 * in the topic.
 *
 * Run: node test/chaos/repro-skipped-partition.ts — exits 1 when the checked
 * producer lost a record, 0 otherwise; prints what plain kafkajs lost.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel, type Producer } from 'kafkajs';
import { PartitionAssigner, sendAcknowledged } from '../../src/kafka/acknowledged-send.ts';
import { KafkaCluster } from '../../tools/kafka/cluster.ts';
import { createTopics, recordCount } from './chaos-kafka.ts';
import { killOnExit } from './ferry-replicas.ts';

const PARTITIONS = 6;
const BATCH = 60;
const log = (line: string) => process.stdout.write(`# ${line}\n`);

const dir = await mkdtemp(join(tmpdir(), 'ferry-repro-skipped-'));
let cluster: KafkaCluster | undefined;
const removeExitHook = killOnExit(() => cluster?.pids() ?? []);
let exitCode = 2;
try {
  cluster = await KafkaCluster.start({ dir, heapMb: 384 });
  const { brokers } = cluster;
  await createTopics(brokers, ['plain', 'checked'], PARTITIONS, {}, 3);
  const kafka = new Kafka({ brokers: brokers.split(','), logLevel: logLevel.NOTHING });
  const plain = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  const checked = kafka.producer({ idempotent: true, maxInFlightRequests: 1 });
  await Promise.all([plain.connect(), checked.connect()]);
  const assigner = new PartitionAssigner(async () => PARTITIONS);

  let running = true;
  const acknowledged = { plain: 0, checked: 0 };
  const loop = async (name: 'plain' | 'checked', producer: Producer) => {
    for (let n = 0; running; n += 1) {
      const messages = Array.from({ length: BATCH }, (_, i) => ({
        key: `${name}-${n}-${i}`,
        value: 'x',
      }));
      const batches = [{ topic: name, messages }];
      if (name === 'plain') await producer.sendBatch({ acks: -1, topicMessages: batches });
      else
        await sendAcknowledged(
          (batch) => producer.sendBatch(batch),
          await assigner.assign(batches),
          { acks: -1 },
        );
      acknowledged[name] += BATCH;
      await sleep(50);
    }
  };
  const loops = [loop('plain', plain), loop('checked', checked)];
  await sleep(3_000);
  const leaders = await cluster.partitionLeaders('plain');
  const counts = new Map<number, number>();
  for (const node of leaders.values()) counts.set(node, (counts.get(node) ?? 0) + 1);
  const victim = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 1;
  log(`kill -9 node ${victim}, leader of ${counts.get(victim)} partitions of "plain"`);
  await cluster.kill9(victim);
  await sleep(25_000);
  running = false;
  await Promise.all(loops);
  await Promise.all([plain.disconnect(), checked.disconnect()]);

  const written = {
    plain: await recordCount(brokers, 'plain'),
    checked: await recordCount(brokers, 'checked'),
  };
  for (const name of ['plain', 'checked'] as const) {
    log(
      `${name}: ${acknowledged[name]} records acknowledged, ${written[name]} in the topic, ${acknowledged[name] - written[name]} lost`,
    );
  }
  exitCode = written.checked === acknowledged.checked ? 0 : 1;
  log(exitCode === 0 ? 'ok: the checked producer lost nothing' : 'PROBLEM: records lost');
} catch (error: unknown) {
  process.stderr.write(`repro failed: ${error instanceof Error ? error.stack : String(error)}\n`);
} finally {
  await cluster?.stop(5_000);
  removeExitHook();
  await rm(dir, { recursive: true, force: true });
}
process.exit(exitCode);
