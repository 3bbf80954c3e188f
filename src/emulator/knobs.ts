import { FerryError } from '../errors.ts';

/**
 * Fault and timing knobs of the emulator. Every rate is a fraction in [0, 1]; every
 * duration is in milliseconds. The request-level fault rates (`http500Rate`,
 * `http429Rate`, `http503Rate`, `timeoutRate`, `lostAnswerRate`, `slowAnswerRate`,
 * `malformedRate`, `missingItemRate`) are exclusive outcomes of one draw per request, so their sum
 * must not exceed 1 and each is hit at exactly its own rate.
 */
export interface EmulatorKnobs {
  /** Added before answering every answered request. Default 0. */
  latencyMs: number;
  /** Answered HTTP 500, nothing processed. Default 0. */
  http500Rate: number;
  /** Answered HTTP 429 (too many requests) with `Retry-After`, nothing processed. Default 0. */
  http429Rate: number;
  /** Answered HTTP 503 (unavailable) with `Retry-After`, nothing processed. Default 0. */
  http503Rate: number;
  /** The wait a 429 or 503 asks for, sent as `Retry-After` in whole seconds (rounded up); 0 sends none. Default 1000. */
  retryAfterMs: number;
  /** Never answered: the socket is held `hangMs` then destroyed, nothing processed. Default 0. */
  timeoutRate: number;
  /** How long a timed-out request holds its socket. Default 30_000. */
  hangMs: number;
  /** Processed (sends recorded, billed, callbacks scheduled), then the socket is destroyed without an answer: the client cannot tell it was processed. Default 0. */
  lostAnswerRate: number;
  /** Processed, answered only after `slowAnswerMs` (past a client's timeout). Default 0. */
  slowAnswerRate: number;
  /** Delay of a slow answer. Default 30_000. */
  slowAnswerMs: number;
  /** Processed, answered HTTP 200 with a body that is not JSON (a truncated answer). Default 0. */
  malformedRate: number;
  /** Processed, answered with the last item missing (sync only). Default 0. */
  missingItemRate: number;
  /** Fraction of accepted messages whose final state is a failure (`UNDELIVERED`, callback success false). Default 0. */
  deliveryFailureRate: number;
  /** Delay between accepting a message and its final state (status view and callback). Default 50. */
  callbackDelayMs: number;
  /** Fraction of callbacks the gateway never sends (a lost receipt, which a `status` lookup still finds). Default 0. */
  callbackDropRate: number;
  /** Fraction of callbacks sent twice (the second right after the first). Default 0. */
  callbackDuplicateRate: number;
  /** Fraction of callbacks sent `callbackLateMs` after the final state instead of `callbackDelayMs`. Default 0. */
  callbackLateRate: number;
  /** Delay of a late callback. Default 60_000. */
  callbackLateMs: number;
  /** Fraction of async requests refused after `request_id` was given: nothing is sent, each hook gets `REJECTED`. Default 0. */
  asyncRefuseRate: number;
  /** Fraction of delivered `viber` messages that end `REPLIED` with `replies` (Viber 2 Way). Default 0.1. */
  viberReplyRate: number;
}

/** The knobs of a fresh emulator: no faults, no latency, final states after 50 ms. */
export const defaultKnobs: Readonly<EmulatorKnobs> = Object.freeze({
  latencyMs: 0,
  http500Rate: 0,
  http429Rate: 0,
  http503Rate: 0,
  retryAfterMs: 1_000,
  timeoutRate: 0,
  hangMs: 30_000,
  lostAnswerRate: 0,
  slowAnswerRate: 0,
  slowAnswerMs: 30_000,
  malformedRate: 0,
  missingItemRate: 0,
  deliveryFailureRate: 0,
  callbackDelayMs: 50,
  callbackDropRate: 0,
  callbackDuplicateRate: 0,
  callbackLateRate: 0,
  callbackLateMs: 60_000,
  asyncRefuseRate: 0,
  viberReplyRate: 0.1,
});

export type KnobName = keyof EmulatorKnobs;

/** Every knob name, in declaration order. */
export const knobNames = Object.keys(defaultKnobs) as KnobName[];

/** The request-level fault rates that share one draw per request (see EmulatorKnobs). */
export const requestFaultKnobs = [
  'http500Rate',
  'http429Rate',
  'http503Rate',
  'timeoutRate',
  'lostAnswerRate',
  'slowAnswerRate',
  'malformedRate',
  'missingItemRate',
] as const satisfies readonly KnobName[];

export type RequestFault = (typeof requestFaultKnobs)[number];

function isKnobName(name: string): name is KnobName {
  return Object.hasOwn(defaultKnobs, name);
}

const MAX_DURATION_MS = 24 * 60 * 60 * 1000;

/**
 * Returns `base` with `changes` applied, after checking every value.
 * @throws FerryError code 'config' (not retryable) naming the knob when a name is unknown,
 *   a rate is outside [0, 1], a duration is not an integer in [0, 86_400_000] ms, or the
 *   request fault rates add up to more than 1.
 */
export function applyKnobs(base: Readonly<EmulatorKnobs>, changes: unknown): EmulatorKnobs {
  if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) {
    throw knobError('knobs: must be an object');
  }
  const next: EmulatorKnobs = { ...base };
  for (const [name, value] of Object.entries(changes)) {
    if (!isKnobName(name)) throw knobError(`${name}: unknown knob`);
    if (typeof value !== 'number' || !Number.isFinite(value)) {
      throw knobError(`${name}: must be a finite number`);
    }
    if (name.endsWith('Rate')) {
      if (value < 0 || value > 1) throw knobError(`${name}: must be between 0 and 1`);
    } else if (!Number.isInteger(value) || value < 0 || value > MAX_DURATION_MS) {
      throw knobError(
        `${name}: must be an integer number of milliseconds between 0 and ${MAX_DURATION_MS}`,
      );
    }
    next[name] = value;
  }
  const faultSum = requestFaultKnobs.reduce((sum, name) => sum + next[name], 0);
  if (faultSum > 1 + 1e-9) {
    throw knobError(`${requestFaultKnobs.join(' + ')}: must add up to at most 1`);
  }
  return next;
}

/** The environment variable of a knob: `http500Rate` -> `EMULATOR_HTTP500_RATE`. */
export function knobEnvName(name: KnobName): string {
  return `EMULATOR_${name.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase()}`;
}

function knobError(message: string): FerryError {
  return new FerryError('config', message, { retryable: false });
}
