/**
 * `make kafka-up` / `make kafka-down` / `make kafka-status`: the developer's local
 * broker on 127.0.0.1:9092 (override with KAFKA_PORT), state under .run/kafka.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  ensureKafkaJars,
  KafkaBrokerError,
  projectRoot,
  readLivePid,
  startBroker,
  stopPid,
  waitForMetadata,
} from './broker.ts';

const port = Number(process.env.KAFKA_PORT ?? 9092);
const controllerPort = Number(process.env.KAFKA_CONTROLLER_PORT ?? port + 1);
const stateDir = join(projectRoot, '.run', 'kafka');
const pidFile = join(stateDir, 'broker.pid');
const brokers = `127.0.0.1:${port}`;

async function up(): Promise<void> {
  const running = await readLivePid(pidFile);
  if (running !== undefined) {
    await waitForMetadata(brokers, 30_000);
    console.log(`kafka: already running (pid ${running}) on ${brokers}`);
    return;
  }
  const broker = await startBroker({ dir: stateDir, port, controllerPort, detached: true });
  await writeFile(pidFile, `${broker.pid}\n`);
  console.log(`kafka: running (pid ${broker.pid}) on ${brokers}; logs in ${broker.logFile}`);
}

async function down(): Promise<void> {
  const pid = await readLivePid(pidFile);
  if (pid === undefined) {
    console.log('kafka: not running');
  } else {
    await stopPid(pid, 30_000);
    console.log(`kafka: stopped (pid ${pid})`);
  }
  await rm(pidFile, { force: true });
}

async function status(): Promise<void> {
  const pid = await readLivePid(pidFile);
  console.log(
    pid === undefined ? 'kafka: not running' : `kafka: running (pid ${pid}) on ${brokers}`,
  );
  if (pid === undefined) process.exitCode = 3;
}

const commands: Record<string, () => Promise<unknown>> = {
  up,
  down,
  status,
  jars: () => ensureKafkaJars().then((dir) => console.log(`kafka: jars in ${dir}`)),
  clean: async () => {
    await down();
    await rm(stateDir, { recursive: true, force: true });
    console.log('kafka: local data removed');
  },
};

const command = commands[process.argv[2] ?? ''];
if (!command) {
  console.error(`usage: node tools/kafka/cli.ts ${Object.keys(commands).join('|')}`);
  process.exit(2);
}
try {
  await command();
} catch (error: unknown) {
  console.error(
    error instanceof KafkaBrokerError ? `kafka: ${error.message}` : `kafka: ${String(error)}`,
  );
  process.exit(1);
}
