/**
 * What ferry must never write to a log (README, Guarantees 4): the API
 * key and tokens, unmasked phone numbers, and message texts at info level and above.
 * Pure functions over plain values; `logger.ts` applies them to every log call.
 */

/** What replaces a secret value or a secret field. */
export const REDACTED = '[Redacted]';
/** What replaces a message text at info level and above. */
export const OMITTED = '[omitted]';

/**
 * Field names whose value is a credential wherever they appear. `auth` is the body
 * field that carries the API key (spec: Authentication 1). Compared lower-cased.
 */
export const SECRET_KEYS: ReadonlySet<string> = new Set([
  'auth',
  'apikey',
  'api_key',
  'token',
  'access_token',
  'accesstoken',
  'refresh_token',
  'callback_token',
  'callbacktoken',
  'admin_token',
  'admintoken',
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'password',
  'secret',
  'ferry_api_key',
  'ferry_callback_token',
  'ferry_admin_token',
]);

/** Field names that hold a phone number (spec: `phone`, a number); masked with {@link maskPhone}. */
export const PHONE_KEYS: ReadonlySet<string> = new Set(['phone', 'phones', 'msisdn']);

/**
 * Field names that hold message text or a raw payload that may contain it: the send
 * texts of the spec (`sms_message`, `viber_message`, `rcs_message`, the `message` of
 * telegram/pipeline stages and replies, template texts, carousel captions) and raw
 * record/request bodies. Omitted at info level and above.
 */
export const TEXT_KEYS: ReadonlySet<string> = new Set([
  'sms_message',
  'viber_message',
  'rcs_message',
  'message',
  'text',
  'template',
  'caption',
  'viber_carousel',
  'replies',
  'reply',
  'value',
  'body',
  'payload',
  'raw',
]);

/**
 * Masks a phone number for logs: keeps the first 3 digits (the country code, or
 * its start for 1- and 2-digit codes) and the last 4, and replaces every digit in
 * between by `*`, one per digit: `380501234567` → `380*****4567`. Separators
 * (`+`, spaces, `-`, `.`, parentheses) are dropped first. Shorter numbers keep less:
 * 8 to 10 digits keep the first 2 and last 2; fewer than 8 keep only the last 2.
 * Anything that is not a number or a string of digits becomes `[masked]` (it may
 * still be personal data); `null`/`undefined` become `[none]`.
 *
 * @param phone the value of a `phone` field as received (number or string, usually).
 * @returns the masked text, never the input itself.
 */
export function maskPhone(phone: unknown): string {
  if (phone === undefined || phone === null) return '[none]';
  let text: string;
  if (typeof phone === 'number' || typeof phone === 'bigint') {
    if (typeof phone === 'number' && !Number.isSafeInteger(phone)) return '[masked]';
    text = phone.toString();
  } else if (typeof phone === 'string') {
    text = phone;
  } else {
    return '[masked]';
  }
  const digits = text.replace(/[\s+\-.()]/g, '');
  if (!/^\d+$/.test(digits)) return '[masked]';
  const n = digits.length;
  if (n > 10) return `${digits.slice(0, 3)}${'*'.repeat(n - 7)}${digits.slice(-4)}`;
  if (n >= 8) return `${digits.slice(0, 2)}${'*'.repeat(n - 4)}${digits.slice(-2)}`;
  if (n > 2) return `${'*'.repeat(n - 2)}${digits.slice(-2)}`;
  return '*'.repeat(n);
}

/** Field names whose string value is an error text: scanned like free text. */
const ERROR_KEYS: ReadonlySet<string> = new Set(['err', 'error', 'cause', 'reason', 'stack']);

/**
 * Runs of 10 to 15 digits, optionally with a leading `+`, in free text (log messages,
 * error messages and stacks): what a phone number (E.164: at most 15 digits) looks
 * like when a library or the gateway echoes it. Field values are not scanned this way.
 */
const PHONE_IN_TEXT = /(?<![\d*])\+?\d{10,15}(?!\d)/g;

/** Settings for {@link Redactor}. */
export interface RedactorOptions {
  /** Exact secret values (API key, tokens) to replace wherever they occur in a string. Empty values are ignored. */
  readonly secrets?: readonly string[];
  /** Maximum nesting depth walked; deeper values become `[depth]`. Default 8. */
  readonly maxDepth?: number;
}

/** How one value is being cleaned. */
interface WalkContext {
  /** Keep message texts (debug and trace only). */
  readonly keepTexts: boolean;
  /** Objects on the current path, to cut cycles. */
  readonly seen: Set<object>;
}

/**
 * Cleans values before they are logged: redacts secret fields and secret values,
 * masks phone fields and phone-like runs in free text, omits message texts unless
 * asked to keep them. Returns copies; never mutates its input.
 */
export class Redactor {
  readonly #secretValues: readonly string[];
  readonly #maxDepth: number;

  constructor(options: RedactorOptions = {}) {
    const values = new Set<string>();
    for (const secret of options.secrets ?? []) {
      if (secret.length === 0) continue;
      values.add(secret);
      // A secret inside a URL (a callback path, a query string) appears encoded.
      values.add(encodeURIComponent(secret));
    }
    // Longest first, so a secret that contains another is replaced whole.
    this.#secretValues = [...values].sort((a, b) => b.length - a.length);
    this.#maxDepth = options.maxDepth ?? 8;
  }

  /** Replaces every configured secret value in `text` by `[Redacted]`. */
  scrubSecrets(text: string): string {
    let result = text;
    for (const secret of this.#secretValues) {
      if (result.includes(secret)) result = result.replaceAll(secret, REDACTED);
    }
    return result;
  }

  /** Free text (a log message, an error message or stack): secrets scrubbed, phone-like runs masked. */
  scrubText(text: string): string {
    return this.scrubSecrets(text).replace(PHONE_IN_TEXT, (match) => maskPhone(match));
  }

  /**
   * Returns a cleaned copy of `value`: plain objects and arrays are copied key by key,
   * Errors become plain serialized objects (`type`, `message`, `stack`, own fields,
   * `cause`), strings are scrubbed of secrets, other values pass unchanged.
   *
   * @param keepTexts keep message-text fields (for debug and trace level lines).
   */
  clean(value: unknown, keepTexts: boolean): unknown {
    return this.#walk(value, 0, { keepTexts, seen: new Set() });
  }

  /** An Error as a plain, cleaned object; the shape of pino's standard `err` serializer. */
  serializeError(error: Error): Record<string, unknown> {
    return this.#error(error, 0, { keepTexts: false, seen: new Set() });
  }

  #walk(value: unknown, depth: number, context: WalkContext): unknown {
    if (typeof value === 'string') return this.scrubSecrets(value);
    if (typeof value !== 'object' || value === null) return value;
    if (depth >= this.#maxDepth) return '[depth]';
    if (context.seen.has(value)) return '[circular]';
    if (value instanceof Error) return this.#error(value, depth, context);
    // Raw bytes (a Kafka record value, a request body) may hold anything.
    if (ArrayBuffer.isView(value)) return `[${value.byteLength} bytes]`;
    if (Array.isArray(value)) {
      context.seen.add(value);
      const copy = value.map((item) => this.#walk(item, depth + 1, context));
      context.seen.delete(value);
      return copy;
    }
    if (!isPlainObject(value)) return value;
    context.seen.add(value);
    const copy: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      copy[key] = this.#field(key, item, depth, context);
    }
    context.seen.delete(value);
    return copy;
  }

  #field(key: string, item: unknown, depth: number, context: WalkContext): unknown {
    const name = key.toLowerCase();
    if (SECRET_KEYS.has(name)) return item === undefined ? undefined : REDACTED;
    if (PHONE_KEYS.has(name)) {
      return Array.isArray(item) ? item.map((phone) => maskPhone(phone)) : maskPhone(item);
    }
    if (
      TEXT_KEYS.has(name) &&
      (typeof item === 'string' || typeof item === 'object') &&
      item !== null
    ) {
      if (!context.keepTexts) return OMITTED;
      // Kept texts are still free text: a pasted phone number or key must not leak.
      if (typeof item === 'string') return this.scrubText(item);
    }
    // An error passed as text (`err: error.message`) is free text like a log message.
    if (typeof item === 'string' && ERROR_KEYS.has(name)) return this.scrubText(item);
    return this.#walk(item, depth + 1, context);
  }

  #error(error: Error, depth: number, context: WalkContext): Record<string, unknown> {
    context.seen.add(error);
    const serialized: Record<string, unknown> = {
      type: error.constructor?.name ?? error.name,
      message: this.scrubText(error.message),
      stack: typeof error.stack === 'string' ? this.scrubText(error.stack) : undefined,
    };
    for (const [key, item] of Object.entries(error)) {
      if (key in serialized || key === 'cause') continue;
      // An error's own fields are ferry's or a library's data, never a user's text,
      // except that they can carry a request (headers, body): same rules as fields.
      serialized[key] = this.#field(key, item, depth, { ...context, keepTexts: false });
    }
    if (error.cause !== undefined && depth + 1 < this.#maxDepth) {
      serialized.cause =
        error.cause instanceof Error && !context.seen.has(error.cause)
          ? this.#error(error.cause, depth + 1, context)
          : this.#walk(error.cause, depth + 1, context);
    }
    if (error instanceof AggregateError) {
      serialized.aggregateErrors = error.errors.map((item: unknown) =>
        this.#walk(item, depth + 1, context),
      );
    }
    context.seen.delete(error);
    return serialized;
  }
}

function isPlainObject(value: object): value is Record<string, unknown> {
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
