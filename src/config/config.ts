/**
 * ferry's configuration: one table of variables (name, parser, default) from which
 * the Config type is derived, read from the environment and checked on every start.
 * A wrong or missing value throws a ConfigError naming the variable.
 */
import { messageOperationTypes } from '../contract/index.ts';
import { ConfigError } from '../errors.ts';
import { checkKafkaSecurity, kafkaSecurityVariables, secretFromFile } from './kafka-security.ts';

type Parser<T> = (raw: string, name: string) => T;

const text: Parser<string> = (raw) => raw;

const integer =
  (min: number, max: number = Number.MAX_SAFE_INTEGER): Parser<number> =>
  (raw, name) => {
    const value = Number(raw);
    if (!/^-?\d+$/.test(raw.trim()) || !Number.isSafeInteger(value)) {
      throw new ConfigError(name, `must be an integer, got "${raw}"`);
    }
    if (value < min || value > max) {
      throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
    }
    return value;
  };

const httpUrl: Parser<string> = (raw, name) => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, `must be an absolute http(s) URL, got "${raw}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new ConfigError(name, `must be an http or https URL, got "${raw}"`);
  }
  return raw.replace(/\/+$/, '');
};

/**
 * The public base URL of the service, under which ferry's own route
 * `/callbacks/{token}` is reached. A value that already ends with `/callbacks` would
 * make the gateway post to `/callbacks/callbacks/{token}`, which nothing answers: every
 * delivery receipt would be lost, so it is refused at start.
 */
const publicBaseUrl: Parser<string> = (raw, name) => {
  const value = httpUrl(raw, name);
  const url = new URL(value);
  if (url.search !== '' || url.hash !== '') {
    throw new ConfigError(name, `must not carry a query or a fragment, got "${raw}"`);
  }
  if (/(^|\/)callbacks\/*$/.test(url.pathname)) {
    throw new ConfigError(
      name,
      `is the service's base URL: ferry adds /callbacks/{token} itself, so it must not end with /callbacks (the gateway would post to /callbacks/callbacks/{token}), got "${raw}"`,
    );
  }
  return value;
};

const list: Parser<string[]> = (raw, name) => {
  const items = raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
  if (items.length === 0) throw new ConfigError(name, 'must list at least one value');
  return items;
};

/** Comma-separated header names, lower-cased; `none` for an empty list. */
const headerNames: Parser<readonly string[]> = (raw, name) => {
  if (raw.trim().toLowerCase() === 'none') return [];
  const names = raw.split(',').map((s) => s.trim().toLowerCase());
  const wrong = names.find((n) => !/^[!#$%&'*+.^_`|~0-9a-z-]+$/.test(n));
  if (wrong !== undefined) {
    throw new ConfigError(name, `must list header names (or none), got "${wrong}"`);
  }
  return [...new Set(names)];
};

const oneOf =
  <const T extends string>(...values: T[]): Parser<T> =>
  (raw, name) => {
    if (!(values as string[]).includes(raw)) {
      throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${raw}"`);
    }
    return raw as T;
  };

const boolean: Parser<boolean> = (raw, name) => {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
};

/**
 * Per operation type, how long after its record's timestamp a command may still be sent:
 * `telegram=300000,call/otp=300000`, `*` for every other message type; `none` for no
 * default. Only message-sending types: a lookup or a template call has no deadline.
 */
const perTypeMs: Parser<ReadonlyMap<string, number>> = (raw, name) => {
  const defaults = new Map<string, number>();
  if (raw.trim().toLowerCase() === 'none' || raw.trim() === '') return defaults;
  for (const entry of raw.split(',').map((s) => s.trim())) {
    const at = entry.lastIndexOf('=');
    const type = entry.slice(0, at).trim();
    if (at <= 0 || (type !== '*' && !(messageOperationTypes as ReadonlySet<string>).has(type))) {
      throw new ConfigError(
        name,
        `must list type=milliseconds pairs of message types (${[...messageOperationTypes].join(', ')}) or *, got "${entry}"`,
      );
    }
    if (defaults.has(type)) throw new ConfigError(name, `names ${type} twice`);
    defaults.set(type, integer(1_000, 30 * 86_400_000)(entry.slice(at + 1).trim(), name));
  }
  return defaults;
};

interface Variable<T> {
  readonly parse: Parser<T>;
  /** The default; `undefined` with `required` false means "unset". */
  readonly fallback?: T;
  readonly required?: boolean;
  readonly secret?: boolean;
}

function v<T>(parse: Parser<T>): Variable<T>;
function v<T>(parse: Parser<T>, fallback: T): Variable<T> & { readonly fallback: T };
function v<T>(parse: Parser<T>, fallback?: T): Variable<T> {
  return fallback === undefined ? { parse } : { parse, fallback };
}

const required = <T>(parse: Parser<T>, secret = false) =>
  ({ parse, required: true, secret }) as const satisfies Variable<T>;
const secret = <T>(parse: Parser<T>) => ({ parse, secret: true }) as const satisfies Variable<T>;

/** Every variable ferry reads. Units are in the names. */
export const variables = {
  FERRY_KAFKA_BROKERS: v(list, ['127.0.0.1:9092']),
  FERRY_KAFKA_CLIENT_ID: v(text, 'ferry'),
  FERRY_KAFKA_GROUP: v(text, 'ferry'),
  FERRY_TOPIC_COMMANDS: v(text, 'ferry.commands'),
  /**
   * A second commands topic whose commands go ahead of the bulk ones (login codes beside
   * a campaign): read by the same replicas with a group, a send queue and an in-flight
   * budget of its own. Unset: no urgent lane.
   */
  FERRY_TOPIC_COMMANDS_URGENT: v(text),
  FERRY_TOPIC_RESULTS: v(text, 'ferry.results'),
  FERRY_TOPIC_STATUS: v(text, 'ferry.status'),
  FERRY_TOPIC_DLQ: v(text, 'ferry.dlq'),
  /** Callbacks that cannot be read as status events, kept raw. */
  FERRY_TOPIC_UNPARSED_CALLBACKS: v(text, 'ferry.callbacks.unparsed'),
  /** Command headers copied to its result, dead letter and status events (trace context). */
  FERRY_PROPAGATE_HEADERS: v(headerNames, ['traceparent', 'tracestate', 'correlation-id']),
  /** The fleet's compacted, single-partition control topic (desired state, replicas, replay lock). */
  FERRY_TOPIC_CONTROL: v(text, 'ferry.control'),
  /** Partitions given to topics ferry creates; replicas run up to this many consumers. */
  /** A member silent for this long is dropped from the group and its partitions move. */
  FERRY_KAFKA_SESSION_TIMEOUT_MS: v(integer(6_000, 300_000), 30_000),
  /** Bytes fetched per partition per request; unset, a quarter of the fetch (in-flight-budget.ts). */
  FERRY_KAFKA_MAX_BYTES_PER_PARTITION: v(integer(1024, 64 * 1024 * 1024)),
  /** Bytes of one fetch over all partitions; unset, an eighth of FERRY_MAX_BYTES_IN_FLIGHT. */
  FERRY_KAFKA_MAX_FETCH_BYTES: v(integer(1024, 256 * 1024 * 1024)),
  /**
   * The codec of the records ferry writes (results, status, dead letters); commands are
   * read in any codec whatever this is. `none` by default: results are small JSON
   * records and ferry is CPU-bound, so compressing costs more than it saves; set lz4
   * or zstd where the link to Kafka is priced by the byte.
   */
  FERRY_KAFKA_COMPRESSION: v(oneOf('none', 'gzip', 'snappy', 'lz4', 'zstd'), 'none'),
  FERRY_TRANSACTIONS: v(oneOf('partition', 'lane'), 'partition'),
  /** Command record values longer than this are refused unparsed, with a dead letter. */
  FERRY_COMMAND_MAX_BYTES: v(integer(1024, 1024 * 1024 * 1024), 1024 * 1024),
  /**
   * Command record values nesting objects and arrays deeper than this are refused unparsed,
   * with a dead letter. Valid operations nest at most 3 levels (see command.ts); the upper
   * bound keeps any accepted value well within what JSON.stringify can encode.
   */
  FERRY_COMMAND_MAX_DEPTH: v(integer(4, 1000), 32),
  /**
   * Result and dead-letter records are cut to this many bytes (key + value + headers): set it
   * to the results/DLQ topics' max.message.bytes minus a margin for batch overhead.
   */
  FERRY_RECORD_MAX_BYTES: v(integer(64 * 1024, 1024 * 1024 * 1024), 1_000_000),
  FERRY_TOPIC_PARTITIONS: v(integer(1, 10_000), 6),
  FERRY_TOPIC_REPLICATION_FACTOR: v(integer(1, 10), 1),
  FERRY_API_KEY: required(text, true),
  FERRY_SYNC_BASE_URL: required(httpUrl),
  FERRY_ASYNC_BASE_URL: v(httpUrl),
  FERRY_TRANSPORT: v(oneOf('sync', 'async'), 'sync'),
  /** The public port: the gateway's callbacks, nothing else. */
  FERRY_HTTP_HOST: v(text, '0.0.0.0'),
  FERRY_HTTP_PORT: v(integer(0, 65_535), 8080),
  /**
   * The operations port: `/metrics` and the health probes, apart from the callbacks so that
   * no load on the public route can fail a liveness probe (and restart the pod).
   */
  FERRY_OPS_HOST: v(text, '0.0.0.0'),
  FERRY_OPS_PORT: v(integer(0, 65_535), 8081),
  FERRY_GRPC_HOST: v(text, '0.0.0.0'),
  FERRY_GRPC_PORT: v(integer(0, 65_535), 50051),
  FERRY_CALLBACK_PUBLIC_URL: v(publicBaseUrl),
  FERRY_CALLBACK_TOKEN: secret(text),
  FERRY_ADMIN_TOKEN: secret(text),
  FERRY_GRPC_TLS_CERT_FILE: v(text),
  FERRY_GRPC_TLS_KEY_FILE: v(text),
  FERRY_GRPC_TLS_CLIENT_CA_FILE: v(text),
  /** Largest admin API request message; a larger one is refused with RESOURCE_EXHAUSTED. */
  FERRY_GRPC_MAX_RECEIVE_BYTES: v(integer(1024, 64 * 1024 * 1024), 1024 * 1024),
  /** Admin calls at once on one connection (HTTP/2 max concurrent streams). */
  FERRY_GRPC_MAX_CONCURRENT_STREAMS: v(integer(1, 10_000), 100),
  /** Health.Watch streams open at once; one more is refused with RESOURCE_EXHAUSTED. */
  FERRY_GRPC_MAX_HEALTH_WATCHES: v(integer(1, 100_000), 100),
  /** Connections each HTTP port (callbacks; metrics and probes) holds at once; more are closed. */
  FERRY_HTTP_MAX_CONNECTIONS: v(integer(1, 1_000_000), 1024),
  /**
   * Connections one client (IPv4 address, IPv6 /64) holds at once on each HTTP port; more are
   * closed at accept, so one client cannot take the port. 0: no per-client cap (behind a
   * proxy whose own per-client limit stands in for it).
   */
  FERRY_HTTP_MAX_CONNECTIONS_PER_CLIENT: v(integer(0, 1_000_000), 64),
  /** Largest request head (request line and headers) on the HTTP server; larger is 431. */
  FERRY_HTTP_MAX_HEADER_BYTES: v(integer(1024, 1024 * 1024), 16 * 1024),
  FERRY_BATCH_MAX_OPS: v(integer(1, 1000), 100),
  FERRY_BATCH_LINGER_MS: v(integer(0, 60_000), 10),
  FERRY_CONCURRENCY: v(integer(1, 1024), 16),
  /** Envelopes in flight at once of the urgent lane, beside FERRY_CONCURRENCY's bulk ones. */
  FERRY_CONCURRENCY_URGENT: v(integer(1, 1024), 4),
  /** Least time from a partition's result transaction to its next; answers meanwhile join the next. */
  FERRY_COMMIT_GAP_MS: v(integer(0, 10_000), 5),
  /** A partition with commands read and nothing committed for this long is logged as stalled. */
  FERRY_STALL_WARN_MS: v(integer(1_000, 86_400_000), 60_000),
  /**
   * Where a result is written: `source`, the partition number of its command (modulo the
   * results topic's count), so that one partition's transaction writes one results
   * partition and no other partition's transactions hold back when it becomes readable;
   * `key`, the partition of its key's murmur2 hash (the Java client's default).
   */
  FERRY_RESULTS_PARTITIONING: v(oneOf('key', 'source'), 'source'),
  /**
   * Duplicate suppression by command id: a command whose id reached the gateway (or may
   * have) on its partition within FERRY_DEDUPE_WINDOW_MS is answered `duplicate`, not sent.
   * Off by default: on, it cost 15–16 % of p99 and of peak RSS at 5,000 commands/s in the
   * benchmark (docs/dedupe.md), over the 10 % a default may cost.
   */
  FERRY_DEDUPE: v(boolean, false),
  FERRY_DEDUPE_WINDOW_MS: v(integer(60_000, 30 * 86_400_000), 86_400_000),
  /** Completed ids kept per partition at most (memory and takeover time); the oldest go first. */
  FERRY_DEDUPE_MAX_IDS: v(integer(1_000, 100_000_000), 100_000),
  /** Where each completed id is kept: compacted, co-partitioned with the commands. */
  FERRY_TOPIC_DEDUPE: v(text, 'ferry.dedupe'),
  /**
   * Final status tracking: every message sent gets exactly one event on
   * FERRY_TOPIC_STATUS_FINAL, from its callback, a `status` lookup, or given up
   * (docs/lifecycle.md). Off by default, like every feature that adds transactions.
   */
  FERRY_STATUS_TRACKING: v(boolean, false),
  /** Where each message sent waits for its final status: compacted, co-partitioned with the commands. */
  FERRY_TOPIC_TRACKING: v(text, 'ferry.tracking'),
  /** One final status event per message sent. */
  FERRY_TOPIC_STATUS_FINAL: v(text, 'ferry.status.final'),
  /** A message without a callback this long after it was sent is looked up (`status`), and again as often. */
  FERRY_STATUS_POLL_AFTER_MS: v(integer(1_000, 7 * 86_400_000), 600_000),
  /** A message without a final status this long after it was sent gets one saying UNKNOWN. */
  FERRY_STATUS_GIVE_UP_AFTER_MS: v(integer(10_000, 30 * 86_400_000), 172_800_000),
  /** How often each owned partition's new tracking records are read. */
  FERRY_STATUS_FOLLOW_MS: v(integer(100, 60_000), 1_000),
  /**
   * Messages awaiting their final status per replica and lane at most (about 224 bytes of
   * heap each): at the bound, fetching pauses until final statuses bring it down.
   */
  FERRY_STATUS_MAX_PENDING: v(integer(1_000, 100_000_000), 100_000),
  /** Statuses a lookup may answer that are not final: the message is asked again later. */
  FERRY_STATUS_NOT_FINAL: v(list, [
    'SENT',
    'ACCEPTED',
    'ENROUTE',
    'QUEUED',
    'SCHEDULED',
    'PENDING',
    'PROCESSING',
  ]),
  /**
   * Deadlines by operation type for commands without a `ferry-expires-at` header, counted
   * from the record's timestamp: a command past its deadline is answered `expired`, never sent.
   */
  FERRY_EXPIRE_AFTER_MS: v(perTypeMs, new Map<string, number>()),
  /** Envelopes per second of each lane's send queue; 0 means no cap. */
  FERRY_RATE_LIMIT_RPS: v(integer(0, 1_000_000), 0),
  /** Commands read and not yet committed, at most (backpressure bound). */
  FERRY_MAX_COMMANDS_IN_FLIGHT: v(integer(1, 10_000_000), 5_000),
  /** Bytes of command records read and not yet committed, at most (same backpressure). */
  FERRY_MAX_BYTES_IN_FLIGHT: v(integer(256 * 1024, 4 * 1024 * 1024 * 1024), 8 * 1024 * 1024),
  FERRY_REQUEST_TIMEOUT_MS: v(integer(100, 600_000), 10_000),
  FERRY_MAX_ATTEMPTS: v(integer(1, 100), 5),
  FERRY_RETRY_BASE_MS: v(integer(1, 60_000), 200),
  FERRY_RETRY_MAX_MS: v(integer(1, 600_000), 5_000),
  /**
   * Longest wait a gateway's `Retry-After` (on HTTP 429 or 503) can impose on every send
   * of the replica; 0 ignores the header. Bounded so a wrong header cannot stop sending
   * for hours.
   */
  FERRY_RETRY_AFTER_MAX_MS: v(integer(0, 3_600_000), 60_000),
  /** After `Access denied`, sending is retried after this long; 0 waits for an operator. */
  FERRY_ACCESS_DENIED_RETRY_MS: v(integer(0, 86_400_000), 300_000),
  FERRY_SHUTDOWN_GRACE_MS: v(integer(0, 600_000), 25_000),
  FERRY_BALANCE_POLL_MS: v(integer(0, 86_400_000), 60_000),
  FERRY_LOG_LEVEL: v(oneOf('fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'), 'info'),
  FERRY_ADMIN_LOOPBACK_ONLY: v(boolean, false),
  ...kafkaSecurityVariables,
} satisfies Record<string, Variable<unknown>>;

type Variables = typeof variables;
type ValueOf<V> = V extends { parse: Parser<infer T> }
  ? V extends { fallback: unknown } | { required: true }
    ? T
    : T | undefined
  : never;

/** The checked configuration, keyed by variable name. */
export type Config = { readonly [K in keyof Variables]: ValueOf<Variables[K]> };

/**
 * Reads and checks every variable.
 * @throws ConfigError naming the first variable that is missing or wrong.
 */
export function readConfig(env: Readonly<Record<string, string | undefined>>): Config {
  const out: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(variables) as [string, Variable<unknown>][]) {
    // A secret may come from a mounted file instead (Kubernetes secrets): `<NAME>_FILE`.
    const fromFile = variable.secret ? secretFromFile(name, env) : undefined;
    if (fromFile !== undefined) {
      out[name] = variable.parse(fromFile, name);
      continue;
    }
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') {
      if (variable.required) throw new ConfigError(name, 'is required');
      out[name] = variable.fallback;
      continue;
    }
    out[name] = variable.parse(raw.trim(), name);
  }
  const config = out as Config;
  checkCrossFields(config);
  return config;
}

function checkCrossFields(config: Config): void {
  if (config.FERRY_TRANSPORT === 'async' && !config.FERRY_ASYNC_BASE_URL) {
    throw new ConfigError('FERRY_ASYNC_BASE_URL', 'is required when FERRY_TRANSPORT is async');
  }
  if (config.FERRY_TOPIC_COMMANDS_URGENT === config.FERRY_TOPIC_COMMANDS) {
    throw new ConfigError(
      'FERRY_TOPIC_COMMANDS_URGENT',
      'must name another topic than FERRY_TOPIC_COMMANDS: one topic cannot be both lanes',
    );
  }
  if (config.FERRY_STATUS_GIVE_UP_AFTER_MS <= config.FERRY_STATUS_POLL_AFTER_MS) {
    throw new ConfigError(
      'FERRY_STATUS_GIVE_UP_AFTER_MS',
      `must be above FERRY_STATUS_POLL_AFTER_MS (${config.FERRY_STATUS_POLL_AFTER_MS}): a message is looked up before ferry gives up on it`,
    );
  }
  if (config.FERRY_CALLBACK_PUBLIC_URL && !config.FERRY_CALLBACK_TOKEN) {
    throw new ConfigError('FERRY_CALLBACK_TOKEN', 'is required when callbacks are on');
  }
  if (!config.FERRY_ADMIN_TOKEN && !config.FERRY_ADMIN_LOOPBACK_ONLY) {
    throw new ConfigError(
      'FERRY_ADMIN_TOKEN',
      'is required unless FERRY_ADMIN_LOOPBACK_ONLY=true binds the admin API to loopback',
    );
  }
  if (config.FERRY_REQUEST_TIMEOUT_MS >= config.FERRY_KAFKA_SESSION_TIMEOUT_MS) {
    // A handover waits a request timeout for the previous owner's last sends to end: a
    // request that outlives a session outlives the membership it was sent under, and
    // makes every takeover slower than noticing the failure it recovers from.
    throw new ConfigError(
      'FERRY_REQUEST_TIMEOUT_MS',
      `must be below FERRY_KAFKA_SESSION_TIMEOUT_MS (${config.FERRY_KAFKA_SESSION_TIMEOUT_MS}), got ${config.FERRY_REQUEST_TIMEOUT_MS}`,
    );
  }
  checkDistinctPorts(config);
  if (config.FERRY_RETRY_MAX_MS < config.FERRY_RETRY_BASE_MS) {
    throw new ConfigError('FERRY_RETRY_MAX_MS', 'must not be below FERRY_RETRY_BASE_MS');
  }
  checkKafkaSecurity(config);
  const tls = [config.FERRY_GRPC_TLS_CERT_FILE, config.FERRY_GRPC_TLS_KEY_FILE];
  if (tls.some(Boolean) && !tls.every(Boolean)) {
    throw new ConfigError(
      config.FERRY_GRPC_TLS_CERT_FILE ? 'FERRY_GRPC_TLS_KEY_FILE' : 'FERRY_GRPC_TLS_CERT_FILE',
      'TLS needs both a certificate and a key file',
    );
  }
}

/** The operations port must be a port of its own (0, a free one picked at start, always is). */
function checkDistinctPorts(config: Config): void {
  const ops = config.FERRY_OPS_PORT;
  if (ops === 0) return;
  for (const other of ['FERRY_HTTP_PORT', 'FERRY_GRPC_PORT'] as const) {
    if (config[other] === ops) {
      throw new ConfigError(
        'FERRY_OPS_PORT',
        `must differ from ${other} (${ops}): metrics and health have a port of their own`,
      );
    }
  }
}

/** The configuration with secrets replaced, for the one start-up log line. */
export function redactedConfig(config: Config): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [name, variable] of Object.entries(variables) as [string, Variable<unknown>][]) {
    const value = config[name as keyof Config];
    out[name] = variable.secret && value !== undefined ? '[redacted]' : value;
  }
  return out;
}

/** The secret values, so the logger can scrub them from any text. */
export function secretValues(config: Config): string[] {
  return [
    config.FERRY_API_KEY,
    config.FERRY_CALLBACK_TOKEN,
    config.FERRY_ADMIN_TOKEN,
    config.FERRY_KAFKA_SASL_PASSWORD,
    config.FERRY_KAFKA_TLS_KEY_PASSWORD,
    config.FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND,
  ].filter((s): s is string => typeof s === 'string' && s.length > 0);
}
