/**
 * How ferry connects to a secured Kafka: the variables (TLS, SASL) and the topic settings
 * ferry creates or expects, their cross-checks, and the PEM files read once at start into
 * a {@link KafkaSecurity} that src/kafka/ turns into client options.
 *
 * Kept apart from config.ts so the Kafka security surface can be read in one place;
 * config.ts spreads {@link kafkaSecurityVariables} into its table.
 */
import { readFileSync } from 'node:fs';
import { ConfigError } from '../errors.ts';

type Parser<T> = (raw: string, name: string) => T;

const text: Parser<string> = (raw) => raw;

const oneOf =
  <const T extends string>(...values: T[]): Parser<T> =>
  (raw, name) => {
    const upper = raw.toUpperCase();
    const found = values.find((value) => value === upper);
    if (!found) throw new ConfigError(name, `must be one of ${values.join(', ')}, got "${raw}"`);
    return found;
  };

const boolean: Parser<boolean> = (raw, name) => {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
};

const integer =
  (min: number, max: number): Parser<number> =>
  (raw, name) => {
    const value = Number(raw);
    if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < min || value > max) {
      throw new ConfigError(name, `must be an integer between ${min} and ${max}, got "${raw}"`);
    }
    return value;
  };

export const securityProtocols = ['PLAINTEXT', 'SSL', 'SASL_PLAINTEXT', 'SASL_SSL'] as const;
export const saslMechanisms = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512', 'OAUTHBEARER'] as const;
export type SaslMechanism = (typeof saslMechanisms)[number];

/**
 * The variables of this module, in config.ts's table shape. Every `secret` one can also
 * be given as `<NAME>_FILE` (config.ts reads the file), which is how Kubernetes secrets
 * are mounted.
 */
export const kafkaSecurityVariables = {
  /** Kafka's own names, so an operator can copy them from the cluster's listener map. */
  FERRY_KAFKA_SECURITY_PROTOCOL: { parse: oneOf(...securityProtocols), fallback: 'PLAINTEXT' },
  /** PEM file of the CA(s) that signed the brokers' certificates; unset trusts Node's CA list. */
  FERRY_KAFKA_TLS_CA_FILE: { parse: text },
  /** PEM client certificate (chain) for mutual TLS. */
  FERRY_KAFKA_TLS_CERT_FILE: { parse: text },
  /** PEM private key of the client certificate. */
  FERRY_KAFKA_TLS_KEY_FILE: { parse: text },
  /** Passphrase of an encrypted private key. */
  FERRY_KAFKA_TLS_KEY_PASSWORD: { parse: text, secret: true },
  /**
   * Whether the broker certificate must name the host ferry connected to. On by default:
   * off, any certificate the CA signed (another cluster's) is accepted for this one.
   */
  FERRY_KAFKA_TLS_CHECK_HOSTNAME: { parse: boolean, fallback: true },
  FERRY_KAFKA_SASL_MECHANISM: { parse: oneOf(...saslMechanisms) },
  FERRY_KAFKA_SASL_USERNAME: { parse: text },
  FERRY_KAFKA_SASL_PASSWORD: { parse: text, secret: true },
  /** A file holding the OAUTHBEARER token (JWT); read again whenever the token is refreshed. */
  FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE: { parse: text },
  /** A shell command whose stdout is the OAUTHBEARER token; run again to refresh it. */
  FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND: { parse: text, secret: true },
  /** Required on topics ferry creates, and checked at start on existing ones. */
  FERRY_TOPIC_MIN_INSYNC_REPLICAS: { parse: integer(1, 10), fallback: 1 },
  /** Set on topics ferry creates when given; checked against FERRY_RECORD_MAX_BYTES at start. */
  FERRY_TOPIC_MAX_MESSAGE_BYTES: { parse: integer(1024, 1024 * 1024 * 1024) },
} as const;

type SecurityConfig = {
  readonly FERRY_KAFKA_SECURITY_PROTOCOL: (typeof securityProtocols)[number];
  readonly FERRY_KAFKA_TLS_CA_FILE?: string | undefined;
  readonly FERRY_KAFKA_TLS_CERT_FILE?: string | undefined;
  readonly FERRY_KAFKA_TLS_KEY_FILE?: string | undefined;
  readonly FERRY_KAFKA_TLS_KEY_PASSWORD?: string | undefined;
  readonly FERRY_KAFKA_TLS_CHECK_HOSTNAME: boolean;
  readonly FERRY_KAFKA_SASL_MECHANISM?: SaslMechanism | undefined;
  readonly FERRY_KAFKA_SASL_USERNAME?: string | undefined;
  readonly FERRY_KAFKA_SASL_PASSWORD?: string | undefined;
  readonly FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE?: string | undefined;
  readonly FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND?: string | undefined;
  readonly FERRY_TOPIC_MIN_INSYNC_REPLICAS: number;
  readonly FERRY_TOPIC_REPLICATION_FACTOR: number;
};

/** Rejects combinations that cannot connect, naming the variable to fix. @throws ConfigError */
export function checkKafkaSecurity(config: SecurityConfig): void {
  const protocol = config.FERRY_KAFKA_SECURITY_PROTOCOL;
  const tls = protocol === 'SSL' || protocol === 'SASL_SSL';
  const sasl = protocol === 'SASL_PLAINTEXT' || protocol === 'SASL_SSL';
  const tlsFiles = [
    config.FERRY_KAFKA_TLS_CA_FILE,
    config.FERRY_KAFKA_TLS_CERT_FILE,
    config.FERRY_KAFKA_TLS_KEY_FILE,
  ];
  if (!tls && tlsFiles.some(Boolean)) {
    throw new ConfigError(
      'FERRY_KAFKA_SECURITY_PROTOCOL',
      `is ${protocol}, which does not use the FERRY_KAFKA_TLS_* files given; use SSL or SASL_SSL`,
    );
  }
  if (Boolean(config.FERRY_KAFKA_TLS_CERT_FILE) !== Boolean(config.FERRY_KAFKA_TLS_KEY_FILE)) {
    throw new ConfigError(
      config.FERRY_KAFKA_TLS_CERT_FILE ? 'FERRY_KAFKA_TLS_KEY_FILE' : 'FERRY_KAFKA_TLS_CERT_FILE',
      'a client certificate needs both a certificate and a key file',
    );
  }
  const mechanism = config.FERRY_KAFKA_SASL_MECHANISM;
  if (sasl && !mechanism) {
    throw new ConfigError('FERRY_KAFKA_SASL_MECHANISM', `is required with ${protocol}`);
  }
  if (!sasl && mechanism) {
    throw new ConfigError(
      'FERRY_KAFKA_SECURITY_PROTOCOL',
      `is ${protocol}, which does not use SASL; use SASL_SSL (or SASL_PLAINTEXT) with FERRY_KAFKA_SASL_MECHANISM`,
    );
  }
  if (mechanism === 'OAUTHBEARER') {
    const sources = [
      config.FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE,
      config.FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND,
    ].filter(Boolean);
    if (sources.length !== 1) {
      throw new ConfigError(
        'FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE',
        'OAUTHBEARER needs exactly one token source: FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE or FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND',
      );
    }
  } else if (mechanism) {
    if (!config.FERRY_KAFKA_SASL_USERNAME) {
      throw new ConfigError('FERRY_KAFKA_SASL_USERNAME', `is required with ${mechanism}`);
    }
    if (!config.FERRY_KAFKA_SASL_PASSWORD) {
      throw new ConfigError(
        'FERRY_KAFKA_SASL_PASSWORD',
        `is required with ${mechanism} (or FERRY_KAFKA_SASL_PASSWORD_FILE)`,
      );
    }
  }
  if (config.FERRY_TOPIC_MIN_INSYNC_REPLICAS > config.FERRY_TOPIC_REPLICATION_FACTOR) {
    // acks=all could never be satisfied: every write would fail with NOT_ENOUGH_REPLICAS.
    throw new ConfigError(
      'FERRY_TOPIC_MIN_INSYNC_REPLICAS',
      `must not exceed FERRY_TOPIC_REPLICATION_FACTOR (${config.FERRY_TOPIC_REPLICATION_FACTOR}), got ${config.FERRY_TOPIC_MIN_INSYNC_REPLICAS}`,
    );
  }
}

/** Where ferry gets its OAUTHBEARER token from. */
export type TokenSource =
  | { readonly kind: 'file'; readonly path: string }
  | { readonly kind: 'command'; readonly command: string };

export type SaslSettings =
  | {
      readonly mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512';
      readonly username: string;
      readonly password: string;
    }
  | { readonly mechanism: 'OAUTHBEARER'; readonly token: TokenSource };

export interface TlsSettings {
  /** PEM text of the trusted CA(s); undefined uses Node's list of public CAs. */
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly keyPassword?: string;
  readonly checkHostname: boolean;
}

/** Everything needed to open a secured connection, with the PEM files already read. */
export interface KafkaSecurity {
  readonly protocol: (typeof securityProtocols)[number];
  readonly tls?: TlsSettings;
  readonly sasl?: SaslSettings;
}

function readPem(variable: string, path: string | undefined): string | undefined {
  if (!path) return undefined;
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (error: unknown) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
    throw new ConfigError(variable, `cannot read "${path}" (${reason})`);
  }
  if (!content.includes('-----BEGIN ')) {
    throw new ConfigError(variable, `"${path}" holds no PEM block`);
  }
  return content;
}

/**
 * Reads the PEM files named by the configuration (once, at start) and gathers the
 * settings. @throws ConfigError naming the variable whose file is missing or not PEM.
 */
export function readKafkaSecurity(config: SecurityConfig): KafkaSecurity {
  const protocol = config.FERRY_KAFKA_SECURITY_PROTOCOL;
  const useTls = protocol === 'SSL' || protocol === 'SASL_SSL';
  const ca = readPem('FERRY_KAFKA_TLS_CA_FILE', config.FERRY_KAFKA_TLS_CA_FILE);
  const cert = readPem('FERRY_KAFKA_TLS_CERT_FILE', config.FERRY_KAFKA_TLS_CERT_FILE);
  const key = readPem('FERRY_KAFKA_TLS_KEY_FILE', config.FERRY_KAFKA_TLS_KEY_FILE);
  const tls: TlsSettings | undefined = useTls
    ? {
        checkHostname: config.FERRY_KAFKA_TLS_CHECK_HOSTNAME,
        ...(ca ? { ca } : {}),
        ...(cert ? { cert } : {}),
        ...(key ? { key } : {}),
        ...(config.FERRY_KAFKA_TLS_KEY_PASSWORD
          ? { keyPassword: config.FERRY_KAFKA_TLS_KEY_PASSWORD }
          : {}),
      }
    : undefined;
  const mechanism = config.FERRY_KAFKA_SASL_MECHANISM;
  let sasl: SaslSettings | undefined;
  if (mechanism === 'OAUTHBEARER') {
    const file = config.FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_FILE;
    const command = config.FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND ?? '';
    sasl = { mechanism, token: file ? { kind: 'file', path: file } : { kind: 'command', command } };
  } else if (mechanism) {
    sasl = {
      mechanism,
      username: config.FERRY_KAFKA_SASL_USERNAME ?? '',
      password: config.FERRY_KAFKA_SASL_PASSWORD ?? '',
    };
  }
  return { protocol, ...(tls ? { tls } : {}), ...(sasl ? { sasl } : {}) };
}

/**
 * Reads `<NAME>_FILE` for a secret variable: the file's content without its trailing
 * newline (what `kubectl create secret --from-file` and editors leave). Setting both the
 * variable and its file is refused: which one wins would be a guess.
 * @returns undefined when `<NAME>_FILE` is not set.
 */
export function secretFromFile(
  name: string,
  env: Readonly<Record<string, string | undefined>>,
): string | undefined {
  const path = env[`${name}_FILE`]?.trim();
  if (!path) return undefined;
  if (env[name] !== undefined && env[name]?.trim() !== '') {
    throw new ConfigError(`${name}_FILE`, `is set together with ${name}; set only one`);
  }
  let content: string;
  try {
    content = readFileSync(path, 'utf8');
  } catch (error: unknown) {
    const reason = error instanceof Error && 'code' in error ? String(error.code) : 'unreadable';
    throw new ConfigError(`${name}_FILE`, `cannot read "${path}" (${reason})`);
  }
  const value = content.replace(/\r?\n$/, '');
  if (value.trim() === '') throw new ConfigError(`${name}_FILE`, `"${path}" is empty`);
  return value;
}
