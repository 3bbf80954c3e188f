/**
 * Kafka connection security in kafkajs's terms: the TLS and SASL client options built
 * from {@link KafkaSecurity}, and the classification of the errors a secured cluster
 * answers with (wrong credentials, an unknown CA, a missing ACL) into ferry's codes.
 */
import type { ConnectionOptions } from 'node:tls';
import type { KafkaSecurity, TokenSource } from '../config/kafka-security.ts';
import { type ErrorCode, FerryError } from '../errors.ts';
import type { KafkaConfig, SASLOptions } from './kafkajs.ts';
import { OAuthTokenProvider } from './oauth-token.ts';

/**
 * One token provider per token source: ferry's clients (pipeline, replay, access check)
 * share the settings object, so they share the token and run a command once, not each.
 */
const providers = new WeakMap<TokenSource, OAuthTokenProvider>();

function providerOf(source: TokenSource): OAuthTokenProvider {
  let provider = providers.get(source);
  if (!provider) {
    provider = new OAuthTokenProvider(source);
    providers.set(source, provider);
  }
  return provider;
}

/**
 * Where and as whom every kafkajs client of ferry connects: brokers, client id, TLS and
 * SASL, and the connect timeout. Each client adds its own logging and retry budget.
 */
export function kafkaConnection(options: {
  readonly clientId: string;
  readonly brokers: readonly string[];
  readonly security?: KafkaSecurity | undefined;
}): Pick<KafkaConfig, 'clientId' | 'brokers' | 'ssl' | 'sasl' | 'connectionTimeout'> {
  return {
    clientId: options.clientId,
    brokers: [...options.brokers],
    ...kafkajsSecurity(options.security),
    connectionTimeout: 3000,
  };
}

/** The `ssl` and `sasl` options of a kafkajs client for these settings. */
export function kafkajsSecurity(
  security: KafkaSecurity | undefined,
): Pick<KafkaConfig, 'ssl' | 'sasl'> {
  if (!security) return {};
  const out: { ssl?: ConnectionOptions; sasl?: SASLOptions } = {};
  const { tls, sasl } = security;
  if (tls) {
    out.ssl = {
      rejectUnauthorized: true,
      ...(tls.ca ? { ca: tls.ca } : {}),
      ...(tls.cert ? { cert: tls.cert } : {}),
      ...(tls.key ? { key: tls.key } : {}),
      ...(tls.keyPassword ? { passphrase: tls.keyPassword } : {}),
      // The chain is still verified against the CA; only the name in it is not compared.
      ...(tls.checkHostname ? {} : { checkServerIdentity: () => undefined }),
    };
  }
  if (sasl?.mechanism === 'OAUTHBEARER') {
    const provider = providerOf(sasl.token);
    out.sasl = {
      mechanism: 'oauthbearer',
      oauthBearerProvider: async () => ({ value: await provider.token() }),
    };
  } else if (sasl) {
    const mechanism = sasl.mechanism.toLowerCase() as 'plain' | 'scram-sha-256' | 'scram-sha-512';
    out.sasl = { mechanism, username: sasl.username, password: sasl.password };
  }
  return out;
}

/** Node's codes for a certificate the client refused, or a handshake the broker refused. */
const TLS_CODES =
  /^(UNABLE_TO_|SELF_SIGNED_CERT|DEPTH_ZERO_SELF_SIGNED_CERT|CERT_|ERR_TLS_|ERR_SSL_|HOSTNAME_MISMATCH|INVALID_CA|INVALID_PURPOSE)/;

const AUTHORIZATION_TYPES = new Set([
  'TOPIC_AUTHORIZATION_FAILED',
  'GROUP_AUTHORIZATION_FAILED',
  'TRANSACTIONAL_ID_AUTHORIZATION_FAILED',
  'CLUSTER_AUTHORIZATION_FAILED',
]);

/** What a secured cluster refused, when the error says so. */
export type KafkaRefusal = Extract<
  ErrorCode,
  'kafka_authentication' | 'kafka_tls' | 'kafka_authorization'
>;

interface Found {
  readonly refusal: KafkaRefusal;
  /** The Kafka error name or Node code that decided it. */
  readonly detail: string;
}

/** The errors nested in a kafkajs error: causes, retried originals, aggregates, per-group errors. */
function nested(error: object): unknown[] {
  const out: unknown[] = [];
  const record = error as Record<string, unknown>;
  for (const key of ['cause', 'originalError']) if (record[key]) out.push(record[key]);
  if (Array.isArray(record.errors)) out.push(...record.errors);
  if (Array.isArray(record.groups)) {
    for (const group of record.groups as { error?: unknown }[])
      if (group?.error) out.push(group.error);
  }
  return out;
}

function find(error: unknown, depth = 0): Found | undefined {
  if (typeof error !== 'object' || error === null || depth > 8) return undefined;
  const record = error as Record<string, unknown>;
  const name = typeof record.name === 'string' ? record.name : '';
  const type = typeof record.type === 'string' ? record.type : '';
  const code = typeof record.code === 'string' ? record.code : '';
  const message = typeof record.message === 'string' ? record.message : '';
  if (name === 'KafkaJSSASLAuthenticationError' || /^SASL .*authentication failed/i.test(message)) {
    return { refusal: 'kafka_authentication', detail: 'SASL_AUTHENTICATION_FAILED' };
  }
  if (AUTHORIZATION_TYPES.has(type)) return { refusal: 'kafka_authorization', detail: type };
  // ferry's own refusal raised inside kafkajs (the OAUTHBEARER token source failing).
  if (error instanceof FerryError && isRefusal(error.code))
    return { refusal: error.code, detail: code };
  if (TLS_CODES.test(code)) return { refusal: 'kafka_tls', detail: code };
  for (const inner of nested(error)) {
    const found = find(inner, depth + 1);
    if (found) return found;
  }
  return undefined;
}

function isRefusal(code: ErrorCode): code is KafkaRefusal {
  return code === 'kafka_authentication' || code === 'kafka_tls' || code === 'kafka_authorization';
}

/** Which refusal of a secured cluster `error` is, if any, and the Kafka or Node code behind it. */
export function kafkaRefusalOf(error: unknown): Found | undefined {
  return find(error);
}

const ADVICE: Record<KafkaRefusal, string> = {
  kafka_authentication:
    'Kafka refused ferry’s SASL credentials: check FERRY_KAFKA_SASL_MECHANISM, FERRY_KAFKA_SASL_USERNAME and the password or token',
  kafka_tls:
    'the TLS handshake with Kafka failed: check FERRY_KAFKA_TLS_CA_FILE (the CA that signed the brokers), the broker certificate’s names, and the client certificate',
  kafka_authorization:
    'Kafka denied an operation ferry needs: an ACL is missing (docs/kafka-security.md lists them)',
};

/**
 * `error` as the FerryError of the refusal it is or wraps (not retryable, with what to
 * check), or undefined when it is no refusal of a secured cluster.
 */
export function refusalError(error: unknown, what: string): FerryError | undefined {
  const found = find(error);
  if (!found) return undefined;
  if (error instanceof FerryError && error.code === found.refusal) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new FerryError(
    found.refusal,
    `${ADVICE[found.refusal]} (${found.detail}; ${what}: ${message})`,
    { cause: error, retryable: false },
  );
}

/**
 * `error` as a FerryError: a refusal of a secured cluster gets its own code, not
 * retryable, with what to check; anything else becomes `kafka`.
 */
export function kafkaError(error: unknown, what: string): FerryError {
  if (error instanceof FerryError) return error;
  const refusal = refusalError(error, what);
  if (refusal) return refusal;
  const message = error instanceof Error ? error.message : String(error);
  return new FerryError('kafka', `${what}: ${message}`, { cause: error });
}
