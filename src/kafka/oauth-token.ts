/**
 * The OAUTHBEARER token ferry presents to Kafka, from a file (a projected service-account
 * token, a sidecar's output) or from a command's stdout, kept until shortly before it
 * expires. kafkajs asks for a token on every new connection; brokers configured with
 * `connections.max.reauth.ms` close a connection whose token expired, and the reconnect
 * asks again, so a token fresh at each ask is what keeps ferry connected.
 */
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import type { TokenSource } from '../config/kafka-security.ts';
import { FerryError } from '../errors.ts';

const execFileAsync = promisify(execFile);

/** Without an `exp` claim, the token is fetched again after this long. */
const UNKNOWN_LIFETIME_MS = 60_000;
/** A token is refreshed once this share of its lifetime has passed. */
const REFRESH_AT = 0.8;
const COMMAND_TIMEOUT_MS = 30_000;

/** The `exp` and `iat` claims of a JWT, in ms; undefined for a token that is not a JWT. */
export function jwtTimes(token: string): { expiresAt?: number; issuedAt?: number } {
  const payload = token.split('.')[1];
  if (!payload) return {};
  try {
    const claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<
      string,
      unknown
    >;
    const seconds = (value: unknown) => (typeof value === 'number' ? value * 1000 : undefined);
    const expiresAt = seconds(claims.exp);
    const issuedAt = seconds(claims.iat);
    return {
      ...(expiresAt !== undefined ? { expiresAt } : {}),
      ...(issuedAt !== undefined ? { issuedAt } : {}),
    };
  } catch {
    return {};
  }
}

export class OAuthTokenProvider {
  readonly #source: TokenSource;
  readonly #now: () => number;
  #token: string | undefined;
  #refreshAt = 0;
  #pending: Promise<string> | undefined;

  constructor(source: TokenSource, now: () => number = Date.now) {
    this.#source = source;
    this.#now = now;
  }

  /** The current token, fetched again when its refresh time has come. @throws FerryError `kafka_authentication` */
  async token(): Promise<string> {
    if (this.#token !== undefined && this.#now() < this.#refreshAt) return this.#token;
    // Connections opened at once share one fetch (one command run).
    this.#pending ??= this.#fetch().finally(() => {
      this.#pending = undefined;
    });
    return this.#pending;
  }

  async #fetch(): Promise<string> {
    const token = (await this.#read()).trim();
    if (token === '') {
      throw new FerryError(
        'kafka_authentication',
        `the OAUTHBEARER ${this.#describe()} gave an empty token`,
        {
          retryable: false,
        },
      );
    }
    const fetchedAt = this.#now();
    const { expiresAt, issuedAt } = jwtTimes(token);
    if (expiresAt !== undefined && expiresAt <= fetchedAt) {
      throw new FerryError(
        'kafka_authentication',
        `the OAUTHBEARER ${this.#describe()} gave an expired token`,
        {
          retryable: false,
        },
      );
    }
    const from = issuedAt !== undefined && issuedAt <= fetchedAt ? issuedAt : fetchedAt;
    this.#refreshAt =
      expiresAt === undefined
        ? fetchedAt + UNKNOWN_LIFETIME_MS
        : from + (expiresAt - from) * REFRESH_AT;
    this.#token = token;
    return token;
  }

  async #read(): Promise<string> {
    const source = this.#source;
    try {
      if (source.kind === 'file') return await readFile(source.path, 'utf8');
      const { stdout } = await execFileAsync('/bin/sh', ['-c', source.command], {
        timeout: COMMAND_TIMEOUT_MS,
        maxBuffer: 1024 * 1024,
      });
      return stdout;
    } catch (error: unknown) {
      // The command's text may hold a secret; only the exit status is kept.
      const reason = error instanceof Error && 'code' in error ? String(error.code) : 'failed';
      throw new FerryError(
        'kafka_authentication',
        `the OAUTHBEARER ${this.#describe()} failed (${reason})`,
        {
          retryable: false,
        },
      );
    }
  }

  #describe(): string {
    return this.#source.kind === 'file' ? `token file ${this.#source.path}` : 'token command';
  }
}
