/**
 * Produces benchmark commands to Kafka, either as a burst (as fast as the broker
 * takes them) or paced at a fixed rate. Each record carries an explicit
 * timestamp, the wall-clock time it was handed to the producer, which the
 * collector compares with the result record's timestamp.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { Kafka, logLevel, Partitioners, type Producer } from 'kafkajs';
import type { BenchCommand } from './command-mix.ts';

export interface LoadGeneratorOptions {
  readonly brokers: readonly string[];
  /** Records per produce request. Default 1000. */
  readonly chunkSize?: number;
  /** Produce requests in flight at once during a burst. Default 4. */
  readonly maxInFlight?: number;
}

/** Called with every chunk just before it is produced, and the timestamp its records carry. */
export type OnSent = (chunk: readonly BenchCommand[], producedAtMs: number) => void;

export interface ProduceReport {
  readonly firstProducedAtMs: number;
  readonly lastAckedAtMs: number;
  readonly count: number;
}

/** A Kafka producer for the benchmark's load (acks from the leader only, no idempotence). */
export class LoadGenerator {
  readonly #producer: Producer;
  readonly #chunkSize: number;
  readonly #maxInFlight: number;

  constructor(options: LoadGeneratorOptions) {
    const kafka = new Kafka({
      clientId: 'ferry-bench-load',
      brokers: [...options.brokers],
      logLevel: logLevel.NOTHING,
    });
    this.#producer = kafka.producer({ createPartitioner: Partitioners.DefaultPartitioner });
    this.#chunkSize = options.chunkSize ?? 1000;
    this.#maxInFlight = options.maxInFlight ?? 4;
  }

  async start(): Promise<void> {
    await this.#producer.connect();
  }

  async stop(): Promise<void> {
    await this.#producer.disconnect();
  }

  async #send(topic: string, chunk: readonly BenchCommand[], onSent: OnSent): Promise<void> {
    const now = Date.now();
    onSent(chunk, now);
    const timestamp = String(now);
    await this.#producer.send({
      topic,
      acks: 1,
      messages: chunk.map((c) => ({ key: c.key, value: c.value, timestamp })),
    });
  }

  /** Produces every command as fast as the broker acknowledges them. @throws the producer's error. */
  async burst(
    topic: string,
    commands: readonly BenchCommand[],
    onSent: OnSent,
  ): Promise<ProduceReport> {
    const firstProducedAtMs = Date.now();
    let next = 0;
    const lane = async (): Promise<void> => {
      while (next < commands.length) {
        const chunk = commands.slice(next, next + this.#chunkSize);
        next += chunk.length;
        await this.#send(topic, chunk, onSent);
      }
    };
    await Promise.all(Array.from({ length: this.#maxInFlight }, lane));
    return { firstProducedAtMs, lastAckedAtMs: Date.now(), count: commands.length };
  }

  /**
   * Produces the commands at `ratePerSecond`, in small chunks every `tickMs`
   * (default 10), so the load is smooth rather than bursty. Ends when every
   * command is produced; a broker slower than the rate makes it fall behind,
   * which the report shows (count / elapsed).
   */
  async paced(
    topic: string,
    commands: readonly BenchCommand[],
    ratePerSecond: number,
    onSent: OnSent,
    tickMs = 10,
  ): Promise<ProduceReport> {
    const firstProducedAtMs = Date.now();
    let sent = 0;
    while (sent < commands.length) {
      const due = Math.min(
        commands.length,
        Math.floor(((Date.now() - firstProducedAtMs) / 1000) * ratePerSecond) + 1,
      );
      if (due > sent) {
        const chunk = commands.slice(sent, Math.min(due, sent + this.#chunkSize));
        sent += chunk.length;
        await this.#send(topic, chunk, onSent);
      } else {
        await sleep(tickMs);
      }
    }
    return { firstProducedAtMs, lastAckedAtMs: Date.now(), count: commands.length };
  }
}
