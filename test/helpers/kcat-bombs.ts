/**
 * Decompression bombs written by a producer ferry did not write: kcat (librdkafka) puts
 * files in one record batch of a codec, each file one record. A bomb is a value of one
 * repeated byte, 100 times the command limit once decompressed and a few hundred KB (or
 * for Snappy, which expands at most ~21 times, a few MB) on the wire.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { promisify } from 'node:util';
import type { Emulator } from '../../src/emulator/index.ts';
import { findTool } from '../deploy/external-tools.ts';
import { smsOperation } from '../fixtures/operations.ts';
import { startFerry, testKafka, testTopics } from './ferry.ts';
import { type FerryProcess, spawnFerry, waitForLog } from './ferry-process.ts';
import { entrypoint, imageEnv, imageLayout } from './image-layout.ts';
import { testBrokers } from './kafka.ts';

const execFileAsync = promisify(execFile);

export const BOMB_CODECS = ['gzip', 'snappy', 'lz4', 'zstd'] as const;
/** The commands topic takes batches this large, for two Snappy bombs of 100 MiB (~10 MB). */
export const BOMB_TOPIC_MAX_MESSAGE_BYTES = 16 * 1024 * 1024;
/** The command limit the bomb tests run ferry with (FERRY_COMMAND_MAX_BYTES, its default). */
export const BOMB_COMMAND_MAX_BYTES = 1024 * 1024;
/** Each bomb's value: 100 times the command limit. */
export const BOMB_BYTES = 100 * BOMB_COMMAND_MAX_BYTES;
/** deploy/k8s/base: the container's memory limit. */
export const BASE_MEMORY_LIMIT_MIB = 288;

/**
 * One batch with kcat into `partition`, in `codec`: each file one record, all keyed
 * `key`. kcat reads a file as one value (its line mode is far too slow for 100 MiB lines).
 */
export async function kcatFilesBatch(
  topic: string,
  partition: number,
  codec: string,
  key: string,
  files: readonly string[],
): Promise<void> {
  const args = [
    ...['-P', '-b', testBrokers().join(','), '-t', topic, '-p', String(partition)],
    ...['-z', codec, '-k', key],
    // One batch for all of it: librdkafka sizes batches before compressing.
    ...['-X', 'message.max.bytes=1000000000', '-X', 'batch.size=1000000000'],
    ...['-X', 'linger.ms=1000', ...files],
  ];
  // The broker decompresses a batch to check it: two Snappy batches of 200 MiB at once can
  // fail on its heap (UNKNOWN_SERVER_ERROR). A failed batch was not written, so it is
  // produced again.
  for (let attempt = 1; ; attempt++) {
    try {
      await execFileAsync(findTool('kcat'), args, { timeout: 120_000 });
      return;
    } catch (error: unknown) {
      const stderr = String((error as { stderr?: unknown }).stderr ?? '');
      if (attempt >= 3 || !stderr.includes('Unknown broker error')) throw error;
      await new Promise((resolve) => setTimeout(resolve, 2000));
    }
  }
}

/** A folder of files for kcat, removed after the test. */
export class KcatFiles {
  readonly dir: string;

  constructor(t: TestContext) {
    this.dir = mkdtempSync(join(tmpdir(), 'ferry-kcat-'));
    t.after(() => rmSync(this.dir, { recursive: true, force: true }));
  }

  /** A file of `bytes` bytes of one repeated byte. */
  bomb(bytes: number): string {
    const file = join(this.dir, `bomb-${bytes}`);
    writeFileSync(file, Buffer.alloc(bytes, 'a'));
    return file;
  }

  /** A file holding a valid SMS command with id `id` (and `fields` added). */
  sms(id: number, fields: Record<string, unknown> = {}): string {
    const file = join(this.dir, String(id));
    writeFileSync(file, JSON.stringify(smsOperation(id, fields)));
    return file;
  }
}

/** A process's peak resident memory (VmHWM), MiB. */
export function peakRssMiB(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)?.[1]) / 1024;
}

export interface BombFleet {
  readonly topics: ReturnType<typeof testTopics>;
  /** The replicas, each the image build in a process of its own, running. */
  readonly replicas: readonly FerryProcess[];
}

/**
 * Topics for bombs (the commands topic takes batches of BOMB_TOPIC_MAX_MESSAGE_BYTES)
 * and `replicas` ferry processes of the image build reading them, with `commandMaxBytes`.
 */
export async function startBombFleet(
  t: TestContext,
  emulator: Emulator,
  {
    partitions,
    replicas,
    commandMaxBytes,
  }: { partitions: number; replicas: number; commandMaxBytes: number },
): Promise<BombFleet> {
  const topics = testTopics();
  await testKafka(t).ensureTopics([
    {
      topic: topics.commands,
      partitions,
      replicationFactor: 1,
      config: { 'max.message.bytes': String(BOMB_TOPIC_MAX_MESSAGE_BYTES) },
    },
  ]);
  // An in-process ferry creates the other topics and stops.
  const setup = await startFerry(
    t,
    emulator,
    { FERRY_TOPIC_PARTITIONS: String(partitions) },
    topics,
  );
  await setup.daemon.stop();
  const image = imageLayout();
  t.after(() => rmSync(image, { recursive: true, force: true }));
  const env = {
    ...setup.env,
    ...imageEnv(),
    FERRY_COMMAND_MAX_BYTES: String(commandMaxBytes),
    FERRY_OPS_PORT: '0',
  };
  const started = Array.from({ length: replicas }, () =>
    spawnFerry(t, env, { args: entrypoint.slice(1), cwd: image }),
  );
  for (const replica of started) await waitForLog(replica, 'ferry is running', 90_000);
  return { topics, replicas: started };
}
