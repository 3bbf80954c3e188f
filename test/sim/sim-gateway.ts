/**
 * The simulated gateway: the emulator's own gateway logic (accounts, the ledger of
 * accepted messages, status lookups) behind a transport with the faults ferry must
 * survive. A request leaves when the replica makes it (a frozen replica's at its thaw,
 * a dead replica's never), arrives within the request timeout and is carried out then,
 * whatever became of the client. Faults per request: refused before any connection
 * (never carried out), HTTP 503 (not carried out), the answer lost (carried out, the
 * client times out), the answer late (carried out, answered after the client gave up).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Transport } from '../../src/contract/index.ts';
import { serializeAnswer } from '../../src/emulator/emulator.ts';
import { Gateway } from '../../src/emulator/gateway.ts';
import { CallbackSender } from '../../src/emulator/index.ts';
import { defaultKnobs } from '../../src/emulator/knobs.ts';
import { FerryError } from '../../src/errors.ts';
import type { GatewayTransport } from '../../src/upstream/gateway-client.ts';
import { GatewayStatusError } from '../../src/upstream/gateway-http.ts';
import type { ReplicaLink } from './replica-link.ts';
import type { SimRandom } from './sim-random.ts';

export const SIM_API_KEY = 'sim-api-key-0123456789';

export interface GatewayFaults {
  readonly refusedRate: number;
  readonly http503Rate: number;
  readonly lostAnswerRate: number;
  readonly lateAnswerRate: number;
  /** Longest one-way trip of a request or answer, ms. */
  readonly maxLatencyMs: number;
}

export const NO_GATEWAY_FAULTS: GatewayFaults = {
  refusedRate: 0,
  http503Rate: 0,
  lostAnswerRate: 0,
  lateAnswerRate: 0,
  maxLatencyMs: 20,
};

export class SimGateway {
  readonly gateway: Gateway;
  readonly #random: SimRandom;
  readonly #requestTimeoutMs: number;
  faults: GatewayFaults;
  /** Requests carried out. */
  requests = 0;

  constructor(random: SimRandom, requestTimeoutMs: number, faults: GatewayFaults) {
    this.#random = random;
    this.#requestTimeoutMs = requestTimeoutMs;
    this.faults = faults;
    this.gateway = new Gateway({
      apiKey: SIM_API_KEY,
      senders: ['FERRY'],
      initialBalance: 1_000_000,
      currency: 'EUR',
      pricePerPart: 0.01,
      notificationUrl: undefined,
      maxMessages: 1_000_000,
      knobs: { ...defaultKnobs, viberReplyRate: 0 },
      random: () => random.next(),
      callbacks: new CallbackSender(),
    });
  }

  /** The transport one replica's gateway client posts through. */
  transport(link: ReplicaLink): GatewayTransport {
    return {
      supports: (transport: Transport) => transport === 'sync',
      urlOf: () => 'sim://gateway/api/json.php',
      post: (transport: Transport, body: string, signal?: AbortSignal) =>
        this.#post(link, transport, body, signal),
    };
  }

  #post(
    link: ReplicaLink,
    transport: Transport,
    body: string,
    signal?: AbortSignal,
  ): Promise<{ body: string; durationMs: number }> {
    const started = performance.now();
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        clearTimeout(timeout);
        signal?.removeEventListener('abort', onAbort);
        fn();
      };
      const onAbort = () =>
        settle(() => reject(new FerryError('aborted', 'the request was aborted')));
      const timeout = setTimeout(
        () => settle(() => reject(new FerryError('transport', 'gateway request timed out'))),
        this.#requestTimeoutMs,
      );
      signal?.addEventListener('abort', onAbort, { once: true });
      void this.#carry(link, transport, body, () => settled).then((answer) => {
        if (answer instanceof Error) settle(() => reject(answer));
        else if (answer !== undefined) {
          settle(() => resolve({ body: answer, durationMs: performance.now() - started }));
        }
      });
    });
  }

  /**
   * The request's trip: @returns the answer body, an error, or undefined (no answer).
   * A request issued while its replica is frozen waits for the thaw; one the client gave
   * up on by then (its timers run on during a freeze here) never leaves. A real SIGSTOP
   * issues nothing while stopped: delivering such a request seconds after its client
   * moved on would be a delay no network of this kind adds.
   */
  async #carry(
    link: ReplicaLink,
    transport: Transport,
    body: string,
    gaveUp: () => boolean,
  ): Promise<string | Error | undefined> {
    await link.reachable();
    if (gaveUp()) return undefined;
    const f = this.faults;
    const draw = this.#random.next();
    if (draw < f.refusedRate) {
      const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
      return new FerryError('transport', 'gateway unreachable (ECONNREFUSED)', { cause });
    }
    const arrival = this.#random.int(0, Math.min(f.maxLatencyMs, this.#requestTimeoutMs - 1));
    if (arrival > 0) await sleep(arrival);
    if (draw < f.refusedRate + f.http503Rate) return new GatewayStatusError(503);
    this.requests += 1;
    const answer = serializeAnswer(this.gateway.handleEnvelope(transport, body, Date.now()), false);
    if (draw < f.refusedRate + f.http503Rate + f.lostAnswerRate) return undefined;
    const late = draw < f.refusedRate + f.http503Rate + f.lostAnswerRate + f.lateAnswerRate;
    await sleep(late ? this.#requestTimeoutMs : this.#random.int(0, f.maxLatencyMs));
    await link.reachable();
    return answer;
  }
}
