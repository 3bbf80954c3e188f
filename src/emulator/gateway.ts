import { ACCESS_DENIED, type Transport, validateEnvelopeShape } from '../contract/index.ts';
import { Account } from './account.ts';
import type { CallbackJob, CallbackSender } from './callback-sender.ts';
import { applyKnobs, type EmulatorKnobs } from './knobs.ts';
import { type AcceptedMessage, MessageLedger } from './message-ledger.ts';
import {
  finalStateCallback,
  type OperationContext,
  processOperation,
  type ResponseItemBody,
  rejectedCallback,
  rejectionUrlOf,
} from './operations.ts';
import type { Random } from './random.ts';
import { TemplateStore } from './template-store.ts';

/** Top-level error of a body that is not JSON (the spec shows no text for it). */
export const INVALID_JSON = 'Invalid JSON';
/** `error` of the `REJECTED` callbacks of an async request refused as a whole (the spec shows no text for it). */
export const REQUEST_REFUSED = 'Request refused';

/** The answer to one envelope, before serialization. */
export type EnvelopeAnswer =
  | { readonly kind: 'rejected'; readonly error: string }
  | { readonly kind: 'items'; readonly items: readonly ResponseItemBody[] }
  | { readonly kind: 'queued'; readonly requestId: string };

/** Options of the gateway's behaviour (no HTTP here). */
export interface GatewayOptions {
  readonly apiKey: string;
  readonly senders: readonly string[];
  readonly initialBalance: number;
  readonly currency: string;
  readonly pricePerPart: number;
  readonly notificationUrl: string | undefined;
  readonly maxMessages: number;
  readonly knobs: Readonly<EmulatorKnobs>;
  readonly random: Random;
  readonly callbacks: CallbackSender;
}

/** Counters of what the gateway accepted. */
export interface GatewayCounts {
  envelopes: { sync: number; async: number };
  operations: number;
  acceptedMessages: number;
  asyncRefused: number;
  /** Callbacks never sent (callbackDropRate), sent twice, sent late. */
  callbacksDropped: number;
  callbacksDuplicated: number;
  callbacksLate: number;
}

/**
 * The gateway's behaviour (spec: gateway-api.md) without HTTP: checks the key and
 * the envelope, performs each operation on the emulated account, and schedules
 * the status callbacks. The HTTP layer (emulator.ts) adds transport faults around it.
 */
export class Gateway {
  readonly account: Account;
  readonly ledger: MessageLedger;
  readonly templates = new TemplateStore();
  #apiKey: string;
  #knobs: EmulatorKnobs;
  readonly #notificationUrl: string | undefined;
  readonly #random: Random;
  readonly #callbacks: CallbackSender;
  #nextRequestNumber = 0;
  readonly #requestIdPrefix = Date.now().toString(36);
  #counts: GatewayCounts = freshCounts();
  /** `status` operations asked per id: how often a client looked a command up. */
  #statusLookups = new Map<string, number>();

  constructor(options: GatewayOptions) {
    this.#apiKey = options.apiKey;
    this.#knobs = { ...options.knobs };
    this.#notificationUrl = options.notificationUrl;
    this.#random = options.random;
    this.#callbacks = options.callbacks;
    this.account = new Account(options);
    this.ledger = new MessageLedger({ maxMessages: options.maxMessages });
  }

  /** The knobs in force. */
  get knobs(): Readonly<EmulatorKnobs> {
    return this.#knobs;
  }

  /** Changes some knobs. @throws FerryError 'config' naming the knob (see applyKnobs); nothing changes then. */
  setKnobs(changes: unknown): void {
    this.#knobs = applyKnobs(this.#knobs, changes);
  }

  /** Changes the account key that `auth` must equal. */
  setApiKey(apiKey: string): void {
    this.#apiKey = apiKey;
  }

  /** Counters since the last reset. */
  counts(): Readonly<GatewayCounts> {
    return this.#counts;
  }

  /** `status` operations received per client `id` (as a string) since the last reset. */
  statusLookupsById(): Record<string, number> {
    return Object.fromEntries(this.#statusLookups);
  }

  /** Forgets accepted messages, templates and counters; restores the balance. Knobs and key stay. */
  reset(): void {
    this.account.reset();
    this.ledger.reset();
    this.templates.reset();
    this.#counts = freshCounts();
    this.#statusLookups = new Map();
  }

  /**
   * Answers one envelope received on `transport`. Sync: performs every operation and
   * returns one item per operation. Async: performs them at once (the queue of the real
   * gateway is modelled as instantaneous, so a `status` asked right after sees them) unless
   * `refuse` is true, and returns the `request_id`; results travel by callback only.
   */
  handleEnvelope(
    transport: Transport,
    bodyText: string,
    nowMs: number,
    refuse = false,
  ): EnvelopeAnswer {
    let parsed: unknown;
    try {
      parsed = JSON.parse(bodyText);
    } catch {
      return { kind: 'rejected', error: INVALID_JSON };
    }
    // The key is checked before the rest of the envelope: a wrong or missing key is
    // `Access denied` whatever else the body holds (spec: Authentication rule 4).
    if (typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed)) {
      if ((parsed as { auth?: unknown }).auth !== this.#apiKey) {
        return { kind: 'rejected', error: ACCESS_DENIED };
      }
    }
    const envelope = validateEnvelopeShape(parsed);
    if (!envelope.ok) return { kind: 'rejected', error: envelope.message };
    const operations = envelope.value.data;
    this.#counts.envelopes[transport] += 1;
    this.#counts.operations += operations.length;
    if (transport === 'sync') return this.#performSync(operations, nowMs);
    return this.#performAsync(operations, nowMs, refuse);
  }

  /** Counts an accepted message and queues its final-state callback, if it has a URL. */
  #recordAccepted(accepted: AcceptedMessage | undefined, jobs: CallbackJob[]): void {
    if (accepted === undefined) return;
    this.#counts.acceptedMessages += 1;
    if (accepted.callbackUrl !== undefined) {
      jobs.push({ url: accepted.callbackUrl, body: JSON.stringify(finalStateCallback(accepted)) });
    }
  }

  /**
   * Queues callbacks after `callbackDelayMs`, except those the callback fault knobs pick:
   * dropped (never sent), sent twice, or sent `callbackLateMs` late. The draws are made
   * only while a knob is on, so a seeded run without them sees the same sequence as before.
   */
  #scheduleCallbacks(jobs: readonly CallbackJob[]): void {
    const knobs = this.#knobs;
    if (knobs.callbackDropRate + knobs.callbackDuplicateRate + knobs.callbackLateRate === 0) {
      this.#callbacks.sendLater(knobs.callbackDelayMs, jobs);
      return;
    }
    const onTime: CallbackJob[] = [];
    const late: CallbackJob[] = [];
    for (const job of jobs) {
      if (this.#random() < knobs.callbackDropRate) {
        this.#counts.callbacksDropped += 1;
        continue;
      }
      const queue = this.#random() < knobs.callbackLateRate ? late : onTime;
      if (queue === late) this.#counts.callbacksLate += 1;
      queue.push(job);
      if (this.#random() < knobs.callbackDuplicateRate) {
        this.#counts.callbacksDuplicated += 1;
        queue.push(job);
      }
    }
    this.#callbacks.sendLater(knobs.callbackDelayMs, onTime);
    if (late.length > 0) this.#callbacks.sendLater(knobs.callbackLateMs, late);
  }

  #context(nowMs: number, requestId: string | undefined): OperationContext {
    return {
      account: this.account,
      ledger: this.ledger,
      templates: this.templates,
      random: this.#random,
      knobs: this.#knobs,
      notificationUrl: this.#notificationUrl,
      nowMs,
      requestId,
    };
  }

  #countLookup(operation: unknown): void {
    if (typeof operation !== 'object' || operation === null) return;
    const { type, id } = operation as { type?: unknown; id?: unknown };
    if (type !== 'status' || (typeof id !== 'number' && typeof id !== 'string')) return;
    const key = String(id);
    this.#statusLookups.set(key, (this.#statusLookups.get(key) ?? 0) + 1);
  }

  #performSync(operations: readonly unknown[], nowMs: number): EnvelopeAnswer {
    const context = this.#context(nowMs, undefined);
    const items: ResponseItemBody[] = new Array(operations.length);
    const jobs: CallbackJob[] = [];
    for (let index = 0; index < operations.length; index += 1) {
      this.#countLookup(operations[index]);
      const outcome = processOperation(context, operations[index]);
      items[index] = outcome.item;
      this.#recordAccepted(outcome.accepted, jobs);
    }
    this.#scheduleCallbacks(jobs);
    return { kind: 'items', items };
  }

  #performAsync(operations: readonly unknown[], nowMs: number, refuse: boolean): EnvelopeAnswer {
    this.#nextRequestNumber += 1;
    const requestId = `${this.#requestIdPrefix}-${this.#nextRequestNumber}`;
    const jobs: CallbackJob[] = [];
    if (refuse) {
      // spec: Errors — "async request refused with a hook: callback with status REJECTED".
      this.#counts.asyncRefused += 1;
      for (const operation of operations) {
        const url = rejectionUrlOf(operation);
        if (url === undefined) continue;
        jobs.push({
          url,
          body: JSON.stringify(rejectedCallback(operation, requestId, REQUEST_REFUSED, nowMs)),
        });
      }
    } else {
      const context = this.#context(nowMs, requestId);
      for (const operation of operations) {
        const outcome = processOperation(context, operation);
        if (outcome.accepted !== undefined) {
          this.#recordAccepted(outcome.accepted, jobs);
        } else if (!outcome.item.success) {
          // A refused operation of an async request: its hook learns why (spec: pipeline rule 3, Errors).
          const url = rejectionUrlOf(operation);
          if (url !== undefined) {
            const body = rejectedCallback(operation, requestId, outcome.item.error, nowMs);
            jobs.push({ url, body: JSON.stringify(body) });
          }
        }
      }
    }
    this.#scheduleCallbacks(jobs);
    return { kind: 'queued', requestId };
  }
}

function freshCounts(): GatewayCounts {
  return {
    envelopes: { sync: 0, async: 0 },
    operations: 0,
    acceptedMessages: 0,
    asyncRefused: 0,
    callbacksDropped: 0,
    callbacksDuplicated: 0,
    callbacksLate: 0,
  };
}
