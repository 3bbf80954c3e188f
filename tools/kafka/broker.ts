/**
 * A real single-node Apache Kafka (KRaft, broker+controller in one JVM) run from
 * Maven Central jars with the machine's Java. Used by `make kafka-up` and by the
 * test runner, which starts its own broker on free ports in a temporary folder.
 */
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Kafka, logLevel } from 'kafkajs';

/** The one place the broker version is pinned; a 4.x run also needs a log4j2 binding in pom.xml. */
export const KAFKA_VERSION = '3.9.1';

const toolDir = dirname(fileURLToPath(import.meta.url));
export const projectRoot = resolve(toolDir, '..', '..');
const cacheDir = join(projectRoot, '.cache', 'kafka', KAFKA_VERSION);
export const libsDir = join(cacheDir, 'libs');

const execFileAsync = promisify(execFile);

export class KafkaBrokerError extends Error {
  override name = 'KafkaBrokerError';
}

/** Resolves the broker jars into the git-ignored cache once; later calls return at once. */
export async function ensureKafkaJars(): Promise<string> {
  if (existsSync(join(libsDir, `kafka_2.13-${KAFKA_VERSION}.jar`))) return libsDir;
  const staging = `${libsDir}.partial-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(dirname(libsDir), { recursive: true });
  try {
    await execFileAsync(
      'mvn',
      [
        '-q',
        '-B',
        '-f',
        join(toolDir, 'pom.xml'),
        `-Dkafka.version=${KAFKA_VERSION}`,
        'dependency:copy-dependencies',
        '-DincludeScope=runtime',
        `-DoutputDirectory=${staging}`,
      ],
      { maxBuffer: 16 * 1024 * 1024 },
    );
  } catch (error: unknown) {
    const output = error instanceof Error && 'stdout' in error ? String(error.stdout) : '';
    throw new KafkaBrokerError(
      `could not resolve Kafka ${KAFKA_VERSION} jars with Maven: ${output.slice(-2000)}`,
      { cause: error },
    );
  }
  const jars = await readdir(staging);
  // Two SLF4J bindings make the broker log to the wrong place or not at all.
  if (jars.some((jar) => jar.startsWith('logback-classic'))) {
    throw new KafkaBrokerError('a second SLF4J binding (logback) was resolved; fix pom.xml');
  }
  await rm(libsDir, { recursive: true, force: true });
  await rename(staging, libsDir);
  return libsDir;
}

/** Asks the OS for a free loopback port. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error('no port assigned');
  return port;
}

/**
 * Asks the OS for `count` free loopback ports, all different: each is held until every
 * one is assigned (asked one after the other, the OS may hand the same port out twice).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers = Array.from({ length: count }, () => createServer());
  try {
    return await Promise.all(
      servers.map(
        (server) =>
          new Promise<number>((resolvePort, reject) => {
            server.unref();
            server.on('error', reject);
            server.listen(0, '127.0.0.1', () => {
              const address = server.address();
              if (address && typeof address === 'object') resolvePort(address.port);
              else reject(new Error('no port assigned'));
            });
          }),
      ),
    );
  } finally {
    await Promise.all(
      servers.map((server) => new Promise<void>((closed) => server.close(() => closed()))),
    );
  }
}

/** A broker's two ports (clients, controller), different from each other. */
export async function brokerPorts(): Promise<{ port: number; controllerPort: number }> {
  const [port, controllerPort] = await freePorts(2);
  if (port === undefined || controllerPort === undefined) throw new Error('no port assigned');
  return { port, controllerPort };
}

export interface BrokerOptions {
  /** Folder for config, data and logs; created when missing. */
  readonly dir: string;
  readonly port: number;
  readonly controllerPort: number;
  /** JVM heap; without a cap the JVM takes a quarter of RAM. Default 512. */
  readonly heapMb?: number;
  /**
   * JVM options for the heap as Kafka's own start script sets them (`-Xms` = `-Xmx`,
   * G1 with a 20 ms pause goal, KAFKA_JVM_PERFORMANCE_OPTS's defaults) instead of a small
   * initial heap and G1's 200 ms default goal. The benchmark asks for it: a broker is
   * measured as it runs in production.
   */
  readonly productionJvm?: boolean;
  /** How long to wait for a metadata answer. Default 90 000 ms. */
  readonly readyTimeoutMs?: number;
  /** Leaves the JVM running after this process exits (make kafka-up). */
  readonly detached?: boolean;
  /**
   * Listeners beside PLAINTEXT, e.g. `{ name: 'SASL_SSL', port, protocol: 'SASL_SSL' }`.
   * PLAINTEXT stays the inter-broker listener and the one start-up waits on.
   */
  readonly extraListeners?: readonly ExtraListener[];
  /** server.properties lines added after the defaults (TLS stores, SASL, an authorizer...). */
  readonly extraProperties?: Readonly<Record<string, string>>;
  /** SCRAM users written into the metadata when the storage is formatted (KRaft has no other way before start). */
  readonly scramUsers?: readonly ScramUser[];
  /** The whole server.properties, instead of the single-node one (a node of tools/kafka/cluster.ts). */
  readonly serverProperties?: string;
  /** The KRaft cluster id to format storage with: every node of one cluster shares it. Default: random. */
  readonly clusterId?: string;
}

export interface ExtraListener {
  /** The listener name, upper case; its settings are `listener.name.<lower case>.*`. */
  readonly name: string;
  readonly port: number;
  readonly protocol: 'PLAINTEXT' | 'SSL' | 'SASL_PLAINTEXT' | 'SASL_SSL';
}

export interface ScramUser {
  readonly mechanism: 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
  readonly name: string;
  readonly password: string;
}

export interface RunningBroker {
  readonly brokers: string;
  readonly pid: number;
  readonly logFile: string;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

function serverProperties(options: BrokerOptions, dataDir: string): string {
  const { port, controllerPort } = options;
  const extra = options.extraListeners ?? [];
  const listeners = extra.map((l) => `,${l.name}://127.0.0.1:${l.port}`).join('');
  const protocols = extra.map((l) => `,${l.name}:${l.protocol}`).join('');
  const properties = Object.entries(options.extraProperties ?? {})
    .map(([key, value]) => `${key}=${value}\n`)
    .join('');
  return `process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:${controllerPort}
listeners=PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}${listeners}
advertised.listeners=PLAINTEXT://127.0.0.1:${port}${listeners}
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
listener.security.protocol.map=CONTROLLER:PLAINTEXT,PLAINTEXT:PLAINTEXT${protocols}
log.dirs=${dataDir}
num.partitions=1
offsets.topic.replication.factor=1
offsets.topic.num.partitions=6
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=6
group.initial.rebalance.delay.ms=0
auto.create.topics.enable=false
${properties}`;
}

const log4jProperties = `log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File=\${kafka.logs.dir}/server.log
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka=INFO
log4j.logger.org.apache.kafka=INFO
log4j.logger.state.change.logger=WARN
log4j.logger.kafka.request.logger=WARN
`;

/** The last `count` lines of a file, or a note that it does not exist. */
export function tailFile(path: string, count = 30): string {
  if (!existsSync(path)) return `(no ${path})`;
  return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-count).join('\n');
}

/** Resolves once the broker answers a metadata request, or throws after `timeoutMs`. */
export async function waitForMetadata(
  brokers: string,
  timeoutMs: number,
  isAlive: () => boolean = () => true,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  while (Date.now() < deadline) {
    if (!isAlive()) throw new KafkaBrokerError('the broker process exited during start-up');
    const admin = new Kafka({
      clientId: 'ferry-broker-probe',
      brokers: brokers.split(','),
      logLevel: logLevel.NOTHING,
      connectionTimeout: 1000,
      retry: { retries: 0 },
    }).admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      if (cluster.brokers.length > 0) return;
    } catch (error: unknown) {
      lastError = error;
    } finally {
      await admin.disconnect().catch(() => undefined);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new KafkaBrokerError(
    `the broker at ${brokers} gave no metadata within ${timeoutMs} ms (${String(lastError)})`,
  );
}

/** A KRaft cluster id: 16 random bytes, URL-safe base64 without padding, not starting with '-'. */
export function newClusterId(): string {
  let clusterId = randomBytes(16).toString('base64url');
  while (clusterId.startsWith('-')) clusterId = randomBytes(16).toString('base64url');
  return clusterId;
}

async function formatStorage(options: BrokerOptions, configFile: string): Promise<void> {
  if (existsSync(join(options.dir, 'data', 'meta.properties'))) return;
  const clusterId = options.clusterId ?? newClusterId();
  try {
    await execFileAsync('java', [
      '-cp',
      `${libsDir}/*`,
      `-Dlog4j.configuration=file:${join(options.dir, 'log4j.properties')}`,
      `-Dkafka.logs.dir=${join(options.dir, 'logs')}`,
      'kafka.tools.StorageTool',
      'format',
      '-t',
      clusterId,
      '-c',
      configFile,
      '-g',
      ...(options.scramUsers ?? []).flatMap((user) => [
        '--add-scram',
        `${user.mechanism}=[name=${user.name},password=${user.password}]`,
      ]),
    ]);
  } catch (error: unknown) {
    const stderr = error instanceof Error && 'stderr' in error ? String(error.stderr) : '';
    throw new KafkaBrokerError(`formatting KRaft storage failed: ${stderr.slice(-2000)}`, {
      cause: error,
    });
  }
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Sends SIGTERM, waits up to `graceMs`, then SIGKILL. */
export async function stopPid(pid: number, graceMs = 30_000): Promise<void> {
  if (!processAlive(pid)) return;
  process.kill(pid, 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (processAlive(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  if (processAlive(pid)) {
    process.kill(pid, 'SIGKILL');
    while (processAlive(pid)) await new Promise((r) => setTimeout(r, 50));
  }
}

/** Formats storage on first start, starts the JVM, and waits for a metadata answer. */
export async function startBroker(options: BrokerOptions): Promise<RunningBroker> {
  await ensureKafkaJars();
  const dataDir = join(options.dir, 'data');
  const logsDir = join(options.dir, 'logs');
  await mkdir(dataDir, { recursive: true });
  await mkdir(logsDir, { recursive: true });
  const configFile = join(options.dir, 'server.properties');
  await writeFile(configFile, options.serverProperties ?? serverProperties(options, dataDir));
  await writeFile(join(options.dir, 'log4j.properties'), log4jProperties);
  await formatStorage(options, configFile);

  const heapMb = options.heapMb ?? 512;
  const consoleLog = join(logsDir, 'console.log');
  const out = openSync(consoleLog, 'a');
  const child: ChildProcess = spawn(
    'java',
    [
      ...(options.productionJvm
        ? [
            `-Xms${heapMb}m`,
            `-Xmx${heapMb}m`,
            '-server',
            '-XX:+UseG1GC',
            '-XX:MaxGCPauseMillis=20',
            '-XX:InitiatingHeapOccupancyPercent=35',
            '-XX:+ExplicitGCInvokesConcurrent',
          ]
        : [`-Xms${Math.min(heapMb, 256)}m`, `-Xmx${heapMb}m`, '-XX:+UseG1GC']),
      '-Djava.awt.headless=true',
      `-Dkafka.logs.dir=${logsDir}`,
      `-Dlog4j.configuration=file:${join(options.dir, 'log4j.properties')}`,
      '-cp',
      `${libsDir}/*`,
      'kafka.Kafka',
      configFile,
    ],
    { detached: options.detached ?? false, stdio: ['ignore', out, out] },
  );
  const pid = child.pid;
  if (pid === undefined) throw new KafkaBrokerError('could not start java');
  let exited = false;
  child.once('exit', () => {
    exited = true;
  });
  if (options.detached) child.unref();

  const brokers = `127.0.0.1:${options.port}`;
  const serverLog = join(logsDir, 'server.log');
  try {
    await waitForMetadata(brokers, options.readyTimeoutMs ?? 90_000, () => !exited);
  } catch (error: unknown) {
    await stopPid(pid, 5_000);
    const detail = `${tailFile(consoleLog, 10)}\n${tailFile(serverLog, 30)}`;
    throw new KafkaBrokerError(
      `${error instanceof Error ? error.message : String(error)}\n--- last broker log lines ---\n${detail}`,
      { cause: error },
    );
  }
  return {
    brokers,
    pid,
    logFile: serverLog,
    stop: (graceMs = 30_000) => stopPid(pid, graceMs),
  };
}

/** Reads a pid file; undefined when absent or the process is gone. */
export async function readLivePid(pidFile: string): Promise<number | undefined> {
  if (!existsSync(pidFile)) return undefined;
  const pid = Number((await readFile(pidFile, 'utf8')).trim());
  return Number.isInteger(pid) && pid > 0 && processAlive(pid) ? pid : undefined;
}
