/**
 * Final status tracking: every message ferry sent gets exactly one final status event.
 *
 * The owner of a command partition is the one writer of its messages' final events. When
 * it is assigned the partition, it initialises the partition's tracking producer (a
 * transactional id of its own per partition, so this fences the previous owner's and
 * completes its last transaction), reads the partition's tracking records back, and then
 * reads on every `followMs`. Each final event is written in one transaction with the
 * tombstones that end its tracking: a takeover, a kill -9 or a fencing in between leaves
 * either both or neither, so no message gets two final events and none is forgotten.
 *
 * A message is finalized from its callback when one was read; else its status is looked
 * up (`status`, many per envelope) once it is `pollAfterMs` old, and again as often while
 * not final; past `giveUpAfterMs` its final event says UNKNOWN (`give_up`).
 */
import type {
  KafkaPort,
  OutboundRecord,
  PartitionProducer,
  TopicReader,
} from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import { partitionTransactionalId } from '../pipeline/partition-transactions.ts';
import type { LookupAnswer, LookupTarget } from '../pipeline/send-outcome.ts';
import {
  type FinalSource,
  type FinalStatus,
  finalStatusRecord,
  fromCallback,
  givenUpStatus,
} from './final-status.ts';
import { pollStatuses } from './status-polls.ts';
import {
  finalizedRecord,
  readTrackingRecord,
  type SeenCallback,
  type SentMessage,
} from './tracking-records.ts';
import { type TrackingLimits, TrackingState } from './tracking-state.ts';

/** Wait after a round whose lookups could not be made (gate closed, gateway failing). */
const POLL_FAILED_WAIT_MS = 30_000;
/** How long a fenced partition waits for the rebalance that moves it before it is taken over again. */
const FENCED_HOLD_MS = 15_000;
/** kafkajs texts of the broker errors that mean another producer took the transactional id. */
const FENCED = /old epoch|fenced|INVALID_PRODUCER_EPOCH|PRODUCER_FENCED/i;

export interface TrackingSettings extends TrackingLimits {
  /** The tracking topic: compacted, co-partitioned with the commands. */
  readonly topic: string;
  /** Where final status events go. */
  readonly finalTopic: string;
  /** How often an owned partition's new tracking records are read, ms. */
  readonly followMs: number;
  /** Upper-case statuses a lookup may answer that are not final (the message is asked again later). */
  readonly notFinal: ReadonlySet<string>;
  /**
   * Messages awaiting their final status on this replica (this lane) at most: at the bound,
   * `onFull(true)` (the pipeline stops fetching); below 90 % of it again, `onFull(false)`.
   * Messages this replica committed as sent count at once, before they are read back.
   */
  readonly maxPending: number;
}

export interface StatusTrackerOptions {
  readonly settings: TrackingSettings;
  readonly kafka: KafkaPort;
  /** The commands topic and group whose partitions this follows; they name the transactional ids. */
  readonly commandsTopic: string;
  readonly groupId: string;
  readonly transactionalIdPrefix: string;
  /** Status lookups through the lane's send queue; undefined when they could not be made now. */
  readonly lookUp: (targets: readonly LookupTarget[]) => Promise<LookupAnswer[] | undefined>;
  readonly logger: Logger;
  readonly metrics: FerryMetrics;
  /** Told when the messages awaiting a final status reach `maxPending`, and when they fall below 90 % of it. */
  readonly onFull?: ((full: boolean) => void) | undefined;
}

/** One owned partition's tracking: not ready until its producer is initialised and its records read. */
interface PartitionTrack {
  readonly partition: number;
  state: TrackingState;
  /** The next tracking offset to read. */
  next: string;
  producer: PartitionProducer | undefined;
  ready: boolean;
  /** No lookups before this (ms since the epoch): the last ones could not be made. */
  lookupsPausedUntil: number;
  /** Not taken over before this (ms since the epoch): another replica fenced this one. */
  takeOverAfter: number;
}

export class StatusTracker {
  readonly #options: StatusTrackerOptions;
  readonly #log: Logger;
  readonly #tracks = new Map<number, PartitionTrack>();
  #reader: TopicReader | undefined;
  #timer: NodeJS.Timeout | undefined;
  #round: Promise<void> | undefined;
  #stopped = false;
  #full = false;

  constructor(options: StatusTrackerOptions) {
    this.#options = options;
    this.#log = options.logger.child({ component: 'status-tracking' });
  }

  /** Messages waiting for a final status in the partitions tracked here, those not read back yet included. */
  get pending(): number {
    let total = 0;
    for (const track of this.#tracks.values()) total += track.state.waiting;
    return total;
  }

  /**
   * `messages` sent were committed on `partition` by this replica: they count toward the
   * bound now, not only once the next round reads them back (a fast lane sends thousands
   * in between).
   */
  sentCommitted(partition: number, messages: number): void {
    const track = this.#tracks.get(partition);
    if (!track) return;
    track.state.sentCommitted(messages);
    this.#checkBound();
  }

  start(): void {
    this.#reader = this.#options.kafka.openTopicReader(this.#options.settings.topic);
    this.#schedule();
  }

  /** The partitions this replica owns now, after a rebalance. */
  assigned(partitions: readonly number[]): void {
    const owned = new Set(partitions);
    for (const [partition, track] of this.#tracks) {
      if (!owned.has(partition)) void this.#drop(track);
    }
    for (const partition of owned) {
      if (!this.#tracks.has(partition)) this.#tracks.set(partition, this.#newTrack(partition));
    }
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    await this.#round;
    await Promise.all([...this.#tracks.values()].map((track) => this.#drop(track)));
    await this.#reader?.close();
  }

  /** One round now (tests and the simulator drive it; the timer does otherwise). */
  async runRound(nowMs = Date.now()): Promise<void> {
    for (const track of [...this.#tracks.values()]) {
      if (this.#stopped || this.#tracks.get(track.partition) !== track) continue;
      try {
        if (!track.ready && Date.now() < track.takeOverAfter) continue;
        if (!track.ready) await this.#takeOver(track);
        if (this.#tracks.get(track.partition) !== track) continue;
        await this.#readOn(track, nowMs);
        await this.#finalizeDue(track, nowMs);
      } catch (error: unknown) {
        const message = error instanceof Error ? error.message : String(error);
        if (FENCED.test(message)) {
          // Another replica took the partition's tracking: it owns the partition now, and
          // the rebalance will say so. Should this replica still hold it once the group has
          // settled (it missed a generation and got the partition back), it takes over again.
          this.#log.info(
            { partition: track.partition },
            "tracking fenced by the partition's new owner",
          );
          await this.#reset(track);
          track.takeOverAfter = Date.now() + FENCED_HOLD_MS;
          continue;
        }
        // Whatever was written or not, reading the partition back from its start tells.
        this.#log.warn(
          { partition: track.partition, err: message },
          'status tracking round failed; taking the partition over again',
        );
        await this.#reset(track);
      }
      this.#options.metrics.awaitingStatus.set(
        { partition: String(track.partition) },
        track.state.pending,
      );
    }
    this.#checkBound();
  }

  /** Holds fetching while too many messages await their final status. */
  #checkBound(): void {
    const { maxPending } = this.#options.settings;
    const pending = this.pending;
    const full = this.#full ? pending >= maxPending * 0.9 : pending >= maxPending;
    if (full === this.#full) return;
    this.#full = full;
    this.#options.onFull?.(full);
  }

  #schedule(): void {
    if (this.#stopped) return;
    this.#timer = setTimeout(() => {
      this.#round = this.runRound().finally(() => {
        this.#round = undefined;
        this.#schedule();
      });
    }, this.#options.settings.followMs);
    this.#timer.unref();
  }

  #newTrack(partition: number): PartitionTrack {
    return {
      partition,
      state: new TrackingState(this.#options.settings),
      next: '0',
      producer: undefined,
      ready: false,
      lookupsPausedUntil: 0,
      takeOverAfter: 0,
    };
  }

  /** Initialises the partition's tracking producer (fencing its previous owner's), then reads its records back. */
  async #takeOver(track: PartitionTrack): Promise<void> {
    const { kafka, transactionalIdPrefix, groupId, commandsTopic } = this.#options;
    const producer = kafka.createTransactionalProducer(
      `${partitionTransactionalId(transactionalIdPrefix, groupId, commandsTopic, track.partition)}-tracking`,
    );
    track.producer = producer;
    await producer.connect();
    track.state = new TrackingState(this.#options.settings);
    track.next = '0';
    const startedMs = performance.now();
    await this.#readOn(track, Date.now());
    track.ready = true;
    this.#log.info(
      {
        partition: track.partition,
        pending: track.state.pending,
        ms: Math.round(performance.now() - startedMs),
      },
      'tracking records read back',
    );
  }

  async #readOn(track: PartitionTrack, nowMs: number): Promise<void> {
    const reader = this.#reader;
    if (!reader) throw new Error('status tracking is not started');
    track.next = await reader.readOn(track.partition, track.next, (stored) => {
      const record = readTrackingRecord(stored.key, stored.value);
      if (record?.kind === 'sent') track.state.sentRead(record.message);
      else if (record?.kind === 'callback') track.state.callbackRead(record.callback, nowMs);
      else if (record?.kind === 'finalized') track.state.finalizedRead(record.of, record.key);
    });
  }

  async #finalizeDue(track: PartitionTrack, nowMs: number): Promise<void> {
    const due = track.state.due(nowMs);
    const finals: {
      message: SentMessage;
      source: FinalSource;
      status: FinalStatus;
      callback?: SeenCallback;
    }[] = [];
    for (const { message, callback } of due.answered) {
      finals.push({ message, source: 'callback', status: fromCallback(callback.event), callback });
    }
    for (const message of due.givenUp) {
      finals.push({ message, source: 'give_up', status: givenUpStatus() });
    }
    finals.push(...(await this.#poll(track, due.toPoll, nowMs)));
    if (finals.length === 0 && due.orphans.length === 0) return;
    const { topic, finalTopic } = this.#options.settings;
    const partition = track.partition;
    const finalAt = new Date();
    const records: OutboundRecord[] = [];
    for (const final of finals) {
      records.push(
        finalStatusRecord(finalTopic, final.message, final.source, final.status, finalAt),
      );
      records.push(finalizedRecord(topic, partition, 'sent', final.message.key));
      if (final.callback)
        records.push(finalizedRecord(topic, partition, 'callback', final.callback.key));
    }
    for (const orphan of due.orphans)
      records.push(finalizedRecord(topic, partition, 'callback', orphan.key));
    const producer = track.producer;
    if (!producer) throw new Error('no tracking producer');
    await producer.commit(records, this.#options.groupId, []);
    for (const final of finals) {
      track.state.finalized(final.message.key, final.callback?.key);
      this.#options.metrics.finalStatuses.inc({ source: final.source });
    }
    for (const orphan of due.orphans) track.state.finalized(undefined, orphan.key);
    this.#log.debug(
      { partition, finals: finals.length, orphans: due.orphans.length },
      'final statuses written',
    );
  }

  /** Looks up messages whose callback is late; @returns those whose status is final now. */
  async #poll(
    track: PartitionTrack,
    messages: readonly SentMessage[],
    nowMs: number,
  ): Promise<{ message: SentMessage; source: FinalSource; status: FinalStatus }[]> {
    if (messages.length === 0 || nowMs < track.lookupsPausedUntil) return [];
    const { metrics, settings, lookUp } = this.#options;
    const answers = await pollStatuses(messages, lookUp, settings.notFinal);
    if (answers.kind === 'failed') {
      metrics.statusPolls.inc({ outcome: 'failed' }, answers.asked);
      track.lookupsPausedUntil = nowMs + Math.min(POLL_FAILED_WAIT_MS, settings.pollAfterMs);
      return [];
    }
    metrics.statusPolls.inc({ outcome: 'final' }, answers.finals.length);
    metrics.statusPolls.inc({ outcome: 'not_final' }, answers.notFinal.length);
    for (const message of answers.notFinal) track.state.polled(message.key, nowMs);
    return answers.finals.map(({ message, status }) => ({ message, source: 'poll', status }));
  }

  async #reset(track: PartitionTrack): Promise<void> {
    track.ready = false;
    const producer = track.producer;
    track.producer = undefined;
    await producer?.disconnect().catch(() => undefined);
  }

  async #drop(track: PartitionTrack): Promise<void> {
    if (this.#tracks.get(track.partition) === track) this.#tracks.delete(track.partition);
    this.#options.metrics.awaitingStatus.remove({ partition: String(track.partition) });
    await this.#reset(track);
  }
}
