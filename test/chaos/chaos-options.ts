/**
 * Options of a chaos run from flags (`--commands=2000`) or the environment
 * (`CHAOS_COMMANDS=2000`); a flag wins. Defaults are the full run (docs/chaos.md).
 */
import { tmpdir } from 'node:os';
import type { ChaosOptions } from './run-chaos.ts';

/** The full run of `make chaos`; the CI form overrides some of these (chaos-short.test.ts). */
export const fullRunDefaults: Omit<ChaosOptions, 'log' | 'seed'> = {
  commands: 20_000,
  partitions: 6,
  replicas: 2,
  kills: 3,
  brokerRestarts: 1,
  addReplica: true,
  produceWindowMs: 60_000,
  badInput: {
    randomBytes: 50,
    truncated: 30,
    nestingDepth: 100_000,
    largeValueBytes: 900 * 1024,
    wrongTypes: 'all',
  },
  compressedPerCodec: 50,
  oversizeBytes: 10 * 1024 * 1024,
  requestTimeoutMs: 1000,
  http500Rate: 0.05,
  timeoutRate: 0.02,
  lostAnswerRate: 0.01,
  drainTimeoutMs: 180_000,
  brokerHeapMb: 512,
  keepLogsDir: tmpdir(),
  statusTracking: true,
  lateCopies: 200,
  lateCopiesAfterMs: 120_000,
};

/** Hard limit of a whole run, set-up and clean-up included. */
export const DEFAULT_OVERALL_TIMEOUT_MS = 15 * 60_000;

export const optionHelp = `options (flag or environment variable):
  --commands=N          CHAOS_COMMANDS          well-formed commands [20000]
  --kills=N             CHAOS_KILLS             kill -9 of a replica, each then restarted [3]
  --broker-restarts=N   CHAOS_BROKER_RESTARTS   restarts of the Kafka broker [1]
  --replicas=N          CHAOS_REPLICAS          replicas at the start [2]
  --add-replica=BOOL    CHAOS_ADD_REPLICA       add one replica mid-run (rebalance) [true]
  --partitions=N        CHAOS_PARTITIONS        partitions of the commands topic [6]
  --window-ms=N         CHAOS_WINDOW_MS         commands are produced over this window [60000]
  --seed=N              CHAOS_SEED              seed of every random choice [random, printed]
  --fuzz=full|short     CHAOS_FUZZ              bad-input set [full]
  --timeout-ms=N        CHAOS_TIMEOUT_MS        hard limit of the whole run [900000]
  --transactions=MODE   CHAOS_TRANSACTIONS      the replicas' FERRY_TRANSACTIONS, partition|lane [ferry's default]`;

function integer(name: string, raw: string): number {
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0)
    throw new Error(`${name}: must be an integer >= 0, got "${raw}"`);
  return value;
}

/**
 * @throws Error naming the option when a value is wrong or a flag is unknown.
 */
export function parseChaosOptions(
  argv: readonly string[],
  env: Readonly<Record<string, string | undefined>>,
  log: (line: string) => void,
): { options: ChaosOptions; overallTimeoutMs: number } {
  const flags = new Map<string, string>();
  for (const arg of argv) {
    const match = /^--([a-z-]+)=(.*)$/.exec(arg);
    if (!match) throw new Error(`unknown argument "${arg}"\n${optionHelp}`);
    flags.set(match[1] as string, match[2] as string);
  }
  const known = [
    'commands',
    'kills',
    'broker-restarts',
    'replicas',
    'add-replica',
    'partitions',
    'window-ms',
    'seed',
    'fuzz',
    'timeout-ms',
    'transactions',
  ];
  for (const name of flags.keys()) {
    if (!known.includes(name)) throw new Error(`unknown option --${name}\n${optionHelp}`);
  }
  const get = (name: string): string | undefined =>
    flags.get(name) ?? env[`CHAOS_${name.toUpperCase().replaceAll('-', '_')}`];
  const num = (name: string, fallback: number): number => {
    const raw = get(name);
    return raw === undefined || raw === '' ? fallback : integer(`--${name}`, raw);
  };
  const fuzz = get('fuzz') ?? 'full';
  if (fuzz !== 'full' && fuzz !== 'short')
    throw new Error(`--fuzz: must be full or short, got "${fuzz}"`);
  const addReplica = get('add-replica') ?? 'true';
  if (!/^(true|false)$/.test(addReplica)) throw new Error(`--add-replica: must be true or false`);
  const transactions = get('transactions');
  if (transactions !== undefined && transactions !== 'partition' && transactions !== 'lane') {
    throw new Error(`--transactions: must be partition or lane, got "${transactions}"`);
  }
  const d = fullRunDefaults;
  const options: ChaosOptions = {
    ...d,
    commands: num('commands', d.commands),
    kills: num('kills', d.kills),
    brokerRestarts: num('broker-restarts', d.brokerRestarts),
    replicas: Math.max(1, num('replicas', d.replicas)),
    addReplica: addReplica === 'true',
    partitions: Math.max(1, num('partitions', d.partitions)),
    produceWindowMs: num('window-ms', d.produceWindowMs),
    seed: num('seed', Math.floor(Math.random() * 2 ** 31)),
    badInput: fuzz === 'full' ? d.badInput : shortBadInput,
    ...(transactions ? { ferryEnv: { FERRY_TRANSACTIONS: transactions } } : {}),
    log,
  };
  return { options, overallTimeoutMs: num('timeout-ms', DEFAULT_OVERALL_TIMEOUT_MS) };
}

/** A smaller bad-input set (one wrong type per field) for the CI form. */
export const shortBadInput: ChaosOptions['badInput'] = {
  randomBytes: 10,
  truncated: 5,
  nestingDepth: 100_000,
  largeValueBytes: 900 * 1024,
  wrongTypes: 'one',
};
