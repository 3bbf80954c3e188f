/**
 * Duplicate suppression by command id: a command whose id reached the gateway (or may
 * have) on its partition within the window is not sent; it is answered `duplicate` with
 * the first's outcome, and a copy arriving while the first is on its way waits for it.
 *
 * What is known lives in Kafka: each first completion is a record of the dedupe topic,
 * written to the commands' partition number in the transaction of its result, and a
 * takeover reads the partition's records back (after initialising the partition's
 * producer, so its last transaction is complete) before the first batch is handled.
 * Each partition's store is its worker's (dedupe-store.ts).
 */
import type { KafkaPort, OutboundRecord } from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import type { ValidCommand } from './command.ts';
import { dedupeKey, dedupeRecord, firstCompletion, readDedupeRecord } from './dedupe-records.ts';
import type { DedupeLimits, DedupeStore } from './dedupe-store.ts';
import { settledAt } from './outcome-times.ts';
import { isReconcilable } from './send-intent.ts';
import type { SendOutcome } from './send-outcome.ts';

export interface DedupeSettings extends DedupeLimits {
  /** The dedupe topic: compacted, co-partitioned with the commands. */
  readonly topic: string;
}

export interface DedupeOptions {
  readonly settings: DedupeSettings;
  readonly kafka: KafkaPort;
  /** The partition's store. */
  readonly storeOf: (partition: number) => DedupeStore;
  readonly metrics: FerryMetrics;
  readonly logger: Logger;
}

type Outcome = Promise<SendOutcome | undefined>;

export class Dedupe {
  readonly #options: DedupeOptions;
  #warnedUnkeyed = false;

  constructor(options: DedupeOptions) {
    this.#options = options;
  }

  /**
   * Reads the partition's dedupe records back, replacing what this replica knew.
   * @throws when the topic cannot be read (the takeover is tried again).
   */
  async restore(partition: number): Promise<void> {
    const { kafka, settings, metrics, logger } = this.#options;
    const store = this.#options.storeOf(partition);
    store.cleared();
    const startedMs = performance.now();
    let records = 0;
    await kafka.readWhole(settings.topic, partition, (record) => {
      records += 1;
      const read = readDedupeRecord(record.key, record.value, partition);
      if (read) store.restored(read.id, read.first);
    });
    const seconds = (performance.now() - startedMs) / 1000;
    metrics.dedupeRestoreDuration.observe(seconds);
    metrics.dedupeIds.set({ partition: String(partition) }, store.size);
    logger.info(
      { partition, records, ids: store.size, ms: Math.round(seconds * 1000) },
      'dedupe records read back',
    );
  }

  /**
   * The outcome of a valid command: a `duplicate` when its id was handled before or is on
   * its way, else whatever `send` makes of it.
   */
  outcomeOf(partition: number, command: ValidCommand, send: () => Outcome): Outcome {
    if (!isReconcilable(command.type, command.id)) return send();
    if (command.record.key === null) this.#unkeyed(partition);
    const store = this.#options.storeOf(partition);
    const id = dedupeKey(command.id);
    const { offset } = command.record;
    const first = this.#firstOf(partition, command);
    if (first !== undefined) {
      this.#options.metrics.duplicates.inc({ source: 'committed' });
      return Promise.resolve({ kind: 'duplicate', first });
    }
    const earlier = store.earlierOf(id, offset);
    const earlierOffset = store.handedOutOffset(id);
    // Same partition, so the earlier one commits before or with this one. If it never
    // reached the gateway, this one is sent as a command of its own; later copies wait
    // for this one in turn.
    const outcome: Outcome =
      earlier === undefined
        ? send()
        : earlier.then((before): Outcome => {
            if (before?.kind === 'abandoned') {
              return Promise.resolve({ kind: 'abandoned', sent: false });
            }
            const completed =
              before?.kind === 'duplicate'
                ? before.first
                : firstCompletion(before, {
                    partition,
                    offset: earlierOffset ?? offset,
                    // The time the first's own result gives (outcome-times.ts).
                    completedAt: settledAt(before) ?? new Date().toISOString(),
                  });
            if (completed === undefined) return send();
            this.#options.metrics.duplicates.inc({ source: 'in_flight' });
            return Promise.resolve({ kind: 'duplicate', first: completed });
          });
    store.handedOut(id, offset, outcome);
    return outcome;
  }

  /**
   * The dedupe records of a batch about to commit: one per command that reached the
   * gateway (or may have), none for duplicates. `committed` makes them known once the
   * transaction has committed.
   */
  recordsOf(
    partition: number,
    answered: readonly {
      command: ValidCommand;
      outcome: SendOutcome | undefined;
      completedAt: string;
    }[],
  ): { records: OutboundRecord[]; committed: () => void } {
    const { topic } = this.#options.settings;
    const reconcilable = answered.filter(({ command }) => isReconcilable(command.type, command.id));
    const firsts = reconcilable.flatMap(({ command, outcome, completedAt }) => {
      const first = firstCompletion(outcome, {
        partition,
        offset: command.record.offset,
        completedAt,
      });
      return first ? [{ id: dedupeKey(command.id), first }] : [];
    });
    return {
      records: firsts.map(({ id, first }) => dedupeRecord(topic, id, first)),
      committed: () => {
        const store = this.#options.storeOf(partition);
        for (const { id, first } of firsts) store.committed(id, first);
        for (const { command } of reconcilable) {
          store.settled(dedupeKey(command.id), command.record.offset);
        }
        this.#options.metrics.dedupeIds.set({ partition: String(partition) }, store.size);
      },
    };
  }

  /** Whether the command's id was handled before (not to be sent, nor looked up). */
  handledBefore(partition: number, command: ValidCommand): boolean {
    return (
      isReconcilable(command.type, command.id) && this.#firstOf(partition, command) !== undefined
    );
  }

  /**
   * The committed first completion of the command's id. It may be this very record, read
   * again after its commit (the group offset set back, a replay): it reached the gateway,
   * so it is answered, not sent again.
   */
  #firstOf(partition: number, command: ValidCommand) {
    return this.#options.storeOf(partition).firstOf(dedupeKey(command.id));
  }

  #unkeyed(partition: number): void {
    this.#options.metrics.dedupeUnkeyed.inc();
    if (this.#warnedUnkeyed) return;
    this.#warnedUnkeyed = true;
    this.#options.logger.warn(
      { partition },
      'a command has no record key: copies of it may be written to another partition, where they are not recognised as copies (keyed commands keep copies together)',
    );
  }
}
