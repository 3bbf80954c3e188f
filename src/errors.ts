/**
 * One error type for ferry with a closed code list. Anything thrown by a library
 * is classified once, at the edge where it enters ferry (see upstream/ and kafka/);
 * everything after reads `.code` and `.retryable`.
 */
export const errorCodes = [
  /** A configuration variable is missing or wrong; the process stops. */
  'config',
  /** A command or callback breaks the gateway contract (spec rules). */
  'contract',
  /** The gateway rejected the account key (`Access denied`). */
  'access_denied',
  /** The gateway answered top-level `success: false` for another reason. */
  'gateway_rejected',
  /** Connection refused/reset, timeout, HTTP 5xx, a body that is not JSON, wrong item count. */
  'transport',
  /** Kafka could not be reached or refused an operation. */
  'kafka',
  /** Kafka refused ferry's SASL credentials (wrong password, unknown user, bad token). */
  'kafka_authentication',
  /** The TLS handshake with Kafka failed (unknown CA, wrong name, client certificate refused). */
  'kafka_tls',
  /** Kafka denied an operation ferry needs: an ACL is missing. */
  'kafka_authorization',
  /** A topic's settings on the cluster cannot work with ferry's configuration. */
  'kafka_topic_settings',
  /** An operation was attempted in a lifecycle state that does not allow it. */
  'illegal_state',
  /** The caller's abort signal fired. */
  'aborted',
  /** An internal invariant broke. */
  'internal',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

export interface FerryErrorOptions {
  readonly cause?: unknown;
  /** Whether repeating the same operation may succeed. Default: true only for `transport` and `kafka`. */
  readonly retryable?: boolean;
}

export class FerryError extends Error {
  override name = 'FerryError';
  readonly code: ErrorCode;
  readonly retryable: boolean;

  constructor(code: ErrorCode, message: string, options: FerryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.retryable = options.retryable ?? (code === 'transport' || code === 'kafka');
  }

  /** Wraps anything thrown into a FerryError, keeping one that already is. */
  static from(error: unknown, code: ErrorCode = 'internal'): FerryError {
    if (error instanceof FerryError) return error;
    const message = error instanceof Error ? error.message : String(error);
    return new FerryError(code, message, { cause: error });
  }
}

/** A config variable is missing or invalid; `variable` names it. */
export class ConfigError extends FerryError {
  override name = 'ConfigError';
  readonly variable: string;
  constructor(variable: string, message: string) {
    super('config', `${variable}: ${message}`, { retryable: false });
    this.variable = variable;
  }
}
