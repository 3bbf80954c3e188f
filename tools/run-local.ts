/**
 * `make run`: the gateway emulator and ferry wired to each other and to the local
 * broker that `make kafka-up` started, with ferry's logs on stdout, made readable by
 * pino-pretty (`RUN_LOGS=json` keeps ferry's JSON lines). Ctrl-C stops both (ferry
 * first, so it drains and commits). Every FERRY_* / EMULATOR_* variable set in the
 * environment overrides the local default below.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import { prettyLogLines } from './pretty-logs.ts';

const emulatorPort = process.env.EMULATOR_PORT ?? '8090';
const httpPort = process.env.FERRY_HTTP_PORT ?? '8080';
const opsPort = process.env.FERRY_OPS_PORT ?? '8081';
const grpcPort = process.env.FERRY_GRPC_PORT ?? '50051';
// Local-only secrets: the emulator and ferry on loopback share them.
const apiKey = process.env.FERRY_API_KEY ?? 'local-dev-key';
const callbackToken = process.env.FERRY_CALLBACK_TOKEN ?? 'local-callback-token';
const adminToken = process.env.FERRY_ADMIN_TOKEN ?? 'local-admin-token';
const emulatorUrl = `http://127.0.0.1:${emulatorPort}`;
const ferryUrl = `http://127.0.0.1:${httpPort}`;
const opsUrl = `http://127.0.0.1:${opsPort}`;
const prettyLogs = process.env.RUN_LOGS !== 'json';

const emulatorEnv = {
  EMULATOR_PORT: emulatorPort,
  EMULATOR_API_KEY: apiKey,
  EMULATOR_SENDERS: 'FERRY,FERRY RCS,ferry,Acme',
  // spec: pipeline rule 2 — the account notification address gets pipeline statuses.
  EMULATOR_NOTIFICATION_URL: `${ferryUrl}/callbacks/${callbackToken}`,
  EMULATOR_LATENCY_MS: '20',
};

const ferryEnv = {
  FERRY_API_KEY: apiKey,
  FERRY_SYNC_BASE_URL: emulatorUrl,
  FERRY_ASYNC_BASE_URL: emulatorUrl,
  FERRY_HTTP_HOST: '127.0.0.1',
  FERRY_HTTP_PORT: httpPort,
  FERRY_OPS_HOST: '127.0.0.1',
  FERRY_OPS_PORT: opsPort,
  // The admin API answers this machine only: the local token is no secret, and there is no TLS.
  FERRY_GRPC_HOST: '127.0.0.1',
  FERRY_GRPC_PORT: grpcPort,
  FERRY_CALLBACK_PUBLIC_URL: ferryUrl,
  FERRY_CALLBACK_TOKEN: callbackToken,
  FERRY_ADMIN_TOKEN: adminToken,
};

/** Ends when every prettified stdout has ended, so the last lines of a drain are printed. */
const logCopies: Promise<void>[] = [];

function start(
  name: string,
  script: string,
  env: Record<string, string>,
  pretty = false,
): ChildProcess {
  const child = spawn(process.execPath, ['--disable-warning=TimeoutNegativeWarning', script], {
    env: { ...env, ...process.env },
    stdio: ['ignore', pretty ? 'pipe' : 'inherit', 'inherit'],
  });
  if (pretty && child.stdout !== null) {
    logCopies.push(
      prettyLogLines(child.stdout, process.stdout, { colorize: process.stdout.isTTY === true }),
    );
  }
  child.once('exit', (code, signal) => {
    if (!stopping) {
      console.error(`run: ${name} exited (${code ?? signal}); stopping`);
      void stopAll(1);
    }
  });
  return child;
}

async function waitForReady(url: string, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(url)).status === 200) return true;
    } catch {
      // not listening yet
    }
    await sleep(250);
  }
  return false;
}

let stopping = false;
const children: ChildProcess[] = [];

async function stopAll(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  // ferry first, so it drains and commits while the emulator still answers.
  for (const child of [...children].reverse()) {
    if (child.exitCode !== null || child.signalCode !== null) continue;
    child.kill('SIGTERM');
    await Promise.race([once(child, 'exit'), sleep(40_000)]);
  }
  await Promise.race([Promise.allSettled(logCopies), sleep(2_000)]);
  process.exit(code);
}

process.on('SIGINT', () => void stopAll(0));
process.on('SIGTERM', () => void stopAll(0));

children.push(start('emulator', 'src/emulator/main.ts', emulatorEnv));
if (!(await waitForReady(`${emulatorUrl}/__emulator/stats`, 20_000))) {
  console.error('run: the emulator did not start');
  await stopAll(1);
}
children.push(start('ferry', 'src/main.ts', ferryEnv, prettyLogs));
if (!(await waitForReady(`${opsUrl}/readyz`, 60_000))) {
  console.error('run: ferry did not become ready within 60 s');
  await stopAll(1);
}

console.log(`
ferry is running: Kafka 127.0.0.1:9092, gateway emulator ${emulatorUrl}, ferry ${ferryUrl} (callbacks; metrics and health :${opsPort}, gRPC :${grpcPort}).

Send a first SMS and wait for its result (in another terminal):
  FERRY_ADMIN_TOKEN=${adminToken} npx ferryctl send sms --phone 380501234567 --text "Hello from ferry" --sender FERRY

Or produce the command yourself: key "42", value to topic ferry.commands
  {"type":"sms","id":42,"phone":380501234567,"sms_message":"Hello","sms_signature":"FERRY"}
and read ferry.results (result) and ferry.status (delivery status, a moment later).

Operate:  FERRY_ADMIN_TOKEN=${adminToken} npx ferryctl state | balance | pause | resume
Metrics:  curl ${opsUrl}/metrics        Health: curl ${opsUrl}/readyz
Stop:     Ctrl-C (then make kafka-down to stop the broker)
`);
