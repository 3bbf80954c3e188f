/**
 * Kafka's own perf tools (what kafka-producer-perf-test.sh and kafka-consumer-perf-test.sh
 * run: org.apache.kafka.tools.ProducerPerformance and ConsumerPerformance), resolved from
 * Maven Central with tools/bench/kafka-tools/pom.xml into .cache/ once and run with the
 * machine's Java, as the broker is (tools/kafka/broker.ts).
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { KAFKA_VERSION, projectRoot } from '../tools/kafka/broker.ts';

const execFileAsync = promisify(execFile);
const libsDir = join(projectRoot, '.cache', 'kafka', KAFKA_VERSION, 'perf-tools-libs');

/** Resolves the perf tools' jars once. @throws Error with Maven's output when it fails. */
export async function ensurePerfToolJars(): Promise<string> {
  if (existsSync(join(libsDir, `kafka-tools-${KAFKA_VERSION}.jar`))) return libsDir;
  const staging = `${libsDir}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(dirname(libsDir), { recursive: true });
  await execFileAsync(
    'mvn',
    [
      '-q',
      '-B',
      '-f',
      join(projectRoot, 'tools', 'bench', 'kafka-tools', 'pom.xml'),
      `-Dkafka.version=${KAFKA_VERSION}`,
      'dependency:copy-dependencies',
      '-DincludeScope=runtime',
      `-DoutputDirectory=${staging}`,
    ],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  await rm(libsDir, { recursive: true, force: true });
  await rename(staging, libsDir);
  return libsDir;
}

async function java(mainClass: string, args: readonly string[]): Promise<string> {
  const { stdout } = await execFileAsync(
    'java',
    ['-Xmx512m', '-cp', `${libsDir}/*`, mainClass, ...args],
    { maxBuffer: 16 * 1024 * 1024, timeout: 180_000 },
  );
  return stdout;
}

/**
 * kafka-producer-perf-test: `records` of `recordSize` bytes as fast as possible, idempotent,
 * acks=all. Returns records/s from its summary line. @throws when the line is missing.
 */
export async function producerPerf(
  brokers: string,
  topic: string,
  records: number,
  recordSize: number,
): Promise<number> {
  const out = await java('org.apache.kafka.tools.ProducerPerformance', [
    '--topic',
    topic,
    '--num-records',
    String(records),
    '--record-size',
    String(recordSize),
    '--throughput',
    '-1',
    '--producer-props',
    `bootstrap.servers=${brokers}`,
    'acks=all',
    'enable.idempotence=true',
  ]);
  const match = /records sent, ([\d.]+) records\/sec/.exec(out);
  if (!match?.[1]) throw new Error(`ProducerPerformance printed no summary:\n${out.slice(-500)}`);
  return Number(match[1]);
}

/**
 * kafka-consumer-perf-test at read_committed: `records` from the topic's start. Returns
 * fetch.nMsg.sec (records/s after the group's rebalance). @throws when the line is missing.
 */
export async function consumerPerf(brokers: string, topic: string, records: number, dir: string) {
  const config = join(dir, 'consumer-perf.properties');
  await writeFile(config, 'isolation.level=read_committed\n');
  const out = await java('org.apache.kafka.tools.ConsumerPerformance', [
    '--bootstrap-server',
    brokers,
    '--topic',
    topic,
    '--messages',
    String(records),
    '--group',
    `${topic}.perf`,
    '--consumer.config',
    config,
  ]);
  const lines = out.trim().split('\n');
  const header = lines.findIndex((l) => l.includes('fetch.nMsg.sec'));
  const names = lines[header]?.split(',').map((s) => s.trim()) ?? [];
  const values = lines[header + 1]?.split(',').map((s) => s.trim()) ?? [];
  const value = Number(values[names.indexOf('fetch.nMsg.sec')]);
  if (header < 0 || !Number.isFinite(value)) {
    throw new Error(`ConsumerPerformance printed no figures:\n${out.slice(-500)}`);
  }
  return value;
}
