/**
 * ferry's one logger: pino, JSON lines, one child per component
 * (`logger.child({ component: 'pipeline' })`). Every call passes through a
 * {@link Redactor} first, so no component has to remember the logging rules
 * (README, Guarantees 4): the API key and tokens never appear, phone numbers are
 * masked, message texts are omitted at info level and above.
 */
import { hostname } from 'node:os';
import pino from 'pino';
import { FerryError } from '../errors.ts';
import { maskPhone, REDACTED, Redactor } from './redaction.ts';

export { maskPhone };

/** The logger type the rest of ferry uses, so only this module imports pino. */
export type Logger = pino.Logger;

/** The levels a logger accepts, most verbose first. */
export const logLevels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;
export type LogLevel = (typeof logLevels)[number];

/** Settings for {@link createLogger}. */
export interface LoggerOptions {
  /** Minimum level written; one of {@link logLevels}. Default `info`. */
  readonly level?: string;
  /**
   * Where lines go: a writable stream, or a file path (appended, created with its
   * folder, written synchronously; for tests and log shippers). Default: stdout.
   */
  readonly destination?: NodeJS.WritableStream | string;
  /** Exact secret values (API key, tokens) to scrub from every string that is logged. */
  readonly secrets?: readonly string[];
  /** Fields added to every line. Default `{ service: 'ferry' }` plus pid and hostname (the pod name in Kubernetes). */
  readonly base?: Readonly<Record<string, unknown>>;
}

/** pino's numeric value of `info`: lines at this level and above never carry texts. */
const INFO_LEVEL = 30;

/**
 * Field paths pino censors on the final object, a second line of defence behind the
 * Redactor (which already replaces these keys at any depth).
 */
const REDACT_PATHS = [
  'auth',
  'apiKey',
  'api_key',
  'token',
  'accessToken',
  'callbackToken',
  'adminToken',
  'authorization',
  '*.auth',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.accessToken',
  '*.callbackToken',
  '*.adminToken',
  '*.authorization',
  'headers.authorization',
  'headers.cookie',
  '*.headers.authorization',
  '*.headers.cookie',
  'envelope.auth',
  'request.body.auth',
];

/**
 * Creates the process logger.
 *
 * @throws FerryError `config` when `level` is not one of {@link logLevels}.
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? 'info';
  if (!isLogLevel(level)) {
    throw new FerryError(
      'config',
      `log level must be one of ${logLevels.join(', ')}, got ${JSON.stringify(level)}`,
      { retryable: false },
    );
  }
  const redactor = new Redactor({ secrets: options.secrets ?? [] });
  // Errors are already serialized by logMethod/bindings; this catches any other path.
  const serializeError = (value: unknown): unknown =>
    value instanceof Error ? redactor.serializeError(value) : value;

  const pinoOptions: pino.LoggerOptions = {
    level,
    base: { service: 'ferry', pid: process.pid, hostname: hostname(), ...(options.base ?? {}) },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: { paths: REDACT_PATHS, censor: REDACTED },
    serializers: { err: serializeError, error: serializeError },
    formatters: {
      // `"level":"info"` rather than 30: what log pipelines and humans filter on.
      level: (label) => ({ level: label }),
      // Child bindings (`logger.child({...})`) never reach logMethod: clean them here.
      bindings: (bindings) => redactor.clean(bindings, false) as pino.Bindings,
    },
    hooks: {
      logMethod(args, method, callLevel) {
        const keepTexts = callLevel < INFO_LEVEL;
        const cleaned = args.map((arg, index) => {
          if (typeof arg === 'string') return redactor.scrubText(arg);
          // pino logs a leading Error as `{ err }` with its message as msg; keep that shape.
          if (index === 0 && arg instanceof Error) return { err: redactor.serializeError(arg) };
          return redactor.clean(arg, keepTexts);
        }) as Parameters<pino.LogFn>;
        method.apply(this, cleaned);
      },
    },
  };
  return pino(pinoOptions, toDestination(options.destination));
}

function isLogLevel(level: string): level is LogLevel {
  return (logLevels as readonly string[]).includes(level);
}

function toDestination(destination: LoggerOptions['destination']): pino.DestinationStream {
  if (destination === undefined) return pino.destination({ dest: 1, sync: true });
  if (typeof destination === 'string') {
    return pino.destination({ dest: destination, sync: true, mkdir: true, append: true });
  }
  return destination as pino.DestinationStream;
}

/**
 * Writes finished log lines (another thread's, already redacted there) where `logger`'s
 * own lines go.
 */
export function lineWriterOf(logger: Logger): (line: string) => void {
  const stream = (logger as unknown as Record<symbol, pino.DestinationStream>)[
    pino.symbols.streamSym
  ];
  return (line) => stream?.write(line);
}
