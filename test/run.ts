/**
 * `npm test`: owns one real Kafka broker for the whole run (free ports, temporary
 * folder, removed afterwards even when tests fail), unless FERRY_TEST_KAFKA_BROKERS
 * points at one already running, then runs node's test runner over the test files.
 *
 * Usage: node test/run.ts [file-or-glob ...]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, type RunningBroker, startBroker } from '../tools/kafka/broker.ts';

const patterns = process.argv.slice(2);
const files = patterns.length > 0 ? patterns : ['test/**/*.test.ts'];

let broker: RunningBroker | undefined;
let brokerDir: string | undefined;

async function teardown(): Promise<void> {
  const running = broker;
  broker = undefined;
  if (running) await running.stop(15_000);
  if (brokerDir) await rm(brokerDir, { recursive: true, force: true });
  brokerDir = undefined;
}

async function main(): Promise<number> {
  let brokers = process.env.FERRY_TEST_KAFKA_BROKERS;
  if (!brokers) {
    brokerDir = await mkdtemp(join(tmpdir(), 'ferry-test-kafka-'));
    const started = Date.now();
    broker = await startBroker({
      dir: brokerDir,
      port: await freePort(),
      controllerPort: await freePort(),
      heapMb: 768,
    });
    brokers = broker.brokers;
    console.log(`# kafka broker ${brokers} ready in ${Date.now() - started} ms (${brokerDir})`);
  }
  const child = spawn(
    process.execPath,
    [
      '--disable-warning=TimeoutNegativeWarning',
      '--test',
      `--test-concurrency=${process.env.FERRY_TEST_CONCURRENCY ?? '3'}`,
      '--test-timeout=240000',
      ...files,
    ],
    { stdio: 'inherit', env: { ...process.env, FERRY_TEST_KAFKA_BROKERS: brokers } },
  );
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  return new Promise((resolveCode) => {
    child.on('exit', (code, signal) => resolveCode(code ?? (signal ? 1 : 0)));
  });
}

let exitCode = 1;
try {
  exitCode = await main();
} catch (error: unknown) {
  console.error(error instanceof Error ? error.message : String(error));
} finally {
  await teardown();
}
process.exit(exitCode);
