/**
 * The gateway's status callbacks in a simulated run, as ferry's receivers would write
 * them: once a message the gateway accepted reaches its final state, its callback record
 * goes to the tracking partition of its command, after a delay drawn from the seed;
 * some are dropped (the gateway gave up, or a receiver answered 503 while the broker was
 * down), some written twice. What was dropped only ferry's lookups can find.
 */
import { callbackRecord } from '../../src/tracking/tracking-records.ts';
import type { SimBroker } from './sim-broker.ts';
import type { SimGateway } from './sim-gateway.ts';
import type { SimRandom } from './sim-random.ts';

export interface CallbackFaults {
  readonly dropRate: number;
  readonly duplicateRate: number;
  /** Longest wait after the final state, ms. */
  readonly maxDelayMs: number;
}

const RECEIVER_ID = 'sim-callback-receiver';
const SCAN_EVERY_MS = 100;

export class SimCallbacks {
  readonly #broker: SimBroker;
  readonly #gateway: SimGateway;
  readonly #random: SimRandom;
  readonly #topic: string;
  readonly #faults: CallbackFaults;
  /** Command id → its partition, as the world wrote it. */
  readonly #partitionOf = new Map<number, number>();
  /** msg_ids whose callback was decided already. */
  readonly #decided = new Set<string>();
  #timer: ReturnType<typeof setInterval> | undefined;
  #writes = 0;
  /** Callbacks written, dropped, and lost to a broker that was down. */
  written = 0;
  dropped = 0;
  lost = 0;

  constructor(
    broker: SimBroker,
    gateway: SimGateway,
    random: SimRandom,
    topic: string,
    faults: CallbackFaults,
  ) {
    this.#broker = broker;
    this.#gateway = gateway;
    this.#random = random;
    this.#topic = topic;
    this.#faults = faults;
  }

  commandWritten(id: number, partition: number): void {
    this.#partitionOf.set(id, partition);
  }

  start(): void {
    this.#timer = setInterval(() => this.#scan(), SCAN_EVERY_MS);
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
  }

  #scan(): void {
    const now = Date.now();
    for (const [id, partition] of this.#partitionOf) {
      const message = this.#gateway.gateway.ledger.find(id);
      if (!message || this.#decided.has(message.msgId) || now < message.finalAtMs) continue;
      this.#decided.add(message.msgId);
      if (this.#random.chance(this.#faults.dropRate)) {
        this.dropped += 1;
        continue;
      }
      const copies = this.#random.chance(this.#faults.duplicateRate) ? 2 : 1;
      const event = {
        id: String(id),
        msg_id: message.msgId,
        success: message.final.success,
        status: message.final.status,
        type: message.final.channel,
        received_at: new Date(now).toISOString(),
      };
      for (let copy = 0; copy < copies; copy++) {
        setTimeout(
          () => void this.#write(partition, { id: String(id), msgId: message.msgId, event }),
          this.#random.int(0, this.#faults.maxDelayMs),
        );
      }
    }
  }

  async #write(
    partition: number,
    callback: { id: string; msgId: string; event: Record<string, unknown> },
  ): Promise<void> {
    try {
      // One transaction per callback: visible as soon as its markers are, like a write
      // acknowledged by the broker before the receiver answers 200.
      // A transactional id per write: concurrent writes never fence each other.
      this.#writes += 1;
      const writer = `${RECEIVER_ID}-${this.#writes}`;
      const epoch = await this.#broker.initProducerId(writer);
      this.#broker.logCommit(
        writer,
        epoch,
        [callbackRecord(this.#topic, partition, { ...callback, key: `id:${callback.id}` })],
        [],
      );
      this.written += 1;
    } catch {
      // The broker is down: the receiver answered 503 and the gateway gave up.
      this.lost += 1;
    }
  }
}
