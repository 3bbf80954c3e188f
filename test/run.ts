/**
 * `npm test`: owns one real Kafka broker for the whole run (free ports, temporary
 * folder, removed afterwards even when tests fail), unless FERRY_TEST_KAFKA_BROKERS
 * points at one already running, then runs node's test runner over the test files.
 *
 * Usage: node test/run.ts [file-or-glob ...]
 */
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokerPorts, type RunningBroker, startBroker } from '../tools/kafka/broker.ts';

const patterns = process.argv.slice(2);
const files = patterns.length > 0 ? patterns : ['test/**/*.test.ts'];

let broker: RunningBroker | undefined;
let brokerDir: string | undefined;
let logDir: string | undefined;

// What must never appear in anything ferry logs during the tests (README, Guarantees 4):
// the API key of the test helpers and the phone numbers of the fixtures.
const forbidden = [
  { what: 'the API key', text: 'test-api-key-0123456789' },
  { what: 'a test phone number', text: '79001234567' },
];

/** Greps everything ferry logged during the run; returns false when a secret or phone number leaked. */
async function checkLogs(file: string): Promise<boolean> {
  let text = '';
  try {
    text = await readFile(file, 'utf8');
  } catch {
    console.log('# log check: ferry logged nothing during this run');
    return true;
  }
  const lines = text.split('\n').filter((line) => line.length > 0);
  const leaks = forbidden.flatMap(({ what, text: needle }) =>
    lines.filter((line) => line.includes(needle)).map((line) => `${what}: ${line.slice(0, 300)}`),
  );
  console.log(`# log check: ${lines.length} log lines scanned, ${leaks.length} leaks`);
  for (const leak of leaks.slice(0, 20)) console.error(`# LEAK ${leak}`);
  return leaks.length === 0;
}

async function teardown(): Promise<void> {
  const running = broker;
  broker = undefined;
  if (running) await running.stop(15_000);
  if (brokerDir) await rm(brokerDir, { recursive: true, force: true });
  brokerDir = undefined;
  if (logDir) await rm(logDir, { recursive: true, force: true });
  logDir = undefined;
}

async function main(): Promise<number> {
  let brokers = process.env.FERRY_TEST_KAFKA_BROKERS;
  if (!brokers) {
    brokerDir = await mkdtemp(join(tmpdir(), 'ferry-test-kafka-'));
    const started = Date.now();
    broker = await startBroker({
      dir: brokerDir,
      ...(await brokerPorts()),
      heapMb: 768,
    });
    brokers = broker.brokers;
    console.log(`# kafka broker ${brokers} ready in ${Date.now() - started} ms (${brokerDir})`);
  }
  logDir = await mkdtemp(join(tmpdir(), 'ferry-test-logs-'));
  const logFile = join(logDir, 'ferry.log');
  const child = spawn(
    process.execPath,
    [
      '--disable-warning=TimeoutNegativeWarning',
      '--test',
      `--test-concurrency=${process.env.FERRY_TEST_CONCURRENCY ?? '3'}`,
      '--test-timeout=240000',
      ...files,
    ],
    {
      stdio: 'inherit',
      env: { ...process.env, FERRY_TEST_KAFKA_BROKERS: brokers, FERRY_TEST_LOG_FILE: logFile },
    },
  );
  const forward = (signal: NodeJS.Signals) => child.kill(signal);
  process.on('SIGINT', forward);
  process.on('SIGTERM', forward);
  const code = await new Promise<number>((resolveCode) => {
    child.on('exit', (exitCode, signal) => resolveCode(exitCode ?? (signal ? 1 : 0)));
  });
  const clean = await checkLogs(logFile);
  return code === 0 && !clean ? 1 : code;
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
