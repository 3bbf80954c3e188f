/**
 * The Kafka port of one simulated replica: its group consumer, its partitions'
 * transactional producers and the group reads, each request and answer passing through
 * the replica's link (frozen: held; dead: never). Fault: with `unknownOutcomeRate` a
 * commit's answer is lost, before or after EndTxn was logged, so ferry cannot tell
 * whether it committed.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type {
  BatchConsumerOptions,
  GroupConsumer,
  KafkaPort,
  LogBounds,
  MembershipSource,
  OutboundRecord,
  PartitionOffset,
  PartitionProducer,
  StoredRecord,
  TopicReader,
  TransactionalOptions,
} from '../../src/kafka/kafka-port.ts';
import { stableRetryWaitMs } from '../../src/kafka/stable-offsets.ts';
import type { ReplicaLink } from './replica-link.ts';
import { CONNECTION_ERROR, type SimBroker } from './sim-broker.ts';
import { type ConsumerFaults, SimConsumer, type SimNote } from './sim-consumer.ts';
import { type SimGroup, UNKNOWN_MEMBER_ERROR } from './sim-group.ts';
import type { SimRandom } from './sim-random.ts';

export interface PortFaults extends ConsumerFaults {
  readonly unknownOutcomeRate: number;
}

/** kafkajs's text of a coordinator that moved while a request was out. */
const NOT_COORDINATOR = 'This is not the correct coordinator for this group';

class SimProducer implements PartitionProducer {
  readonly #port: SimKafkaPort;
  readonly #id: string;
  readonly #fencedBy: MembershipSource | undefined;
  readonly #timeoutMs: number | undefined;
  #epoch: number | undefined;

  constructor(port: SimKafkaPort, transactionalId: string, options: TransactionalOptions) {
    this.#port = port;
    this.#id = transactionalId;
    this.#fencedBy = options.fencedBy;
    this.#timeoutMs = options.transactionTimeoutMs;
  }

  async connect(): Promise<void> {
    const { link, broker, random } = this.#port;
    await link.hop(random, 3);
    const epoch = await broker.initProducerId(this.#id);
    await link.hop(random, 3);
    this.#epoch = epoch;
  }

  async commit(
    records: readonly OutboundRecord[],
    _groupId: string,
    offsets: readonly PartitionOffset[],
  ): Promise<void> {
    const { link, broker, random, faults } = this.#port;
    const epoch = this.#epoch;
    if (epoch === undefined) throw new Error('the producer is not connected');
    await link.hop(random, 3);
    broker.checkEpoch(this.#id, epoch);
    await broker.previousComplete(this.#id);
    if (this.#fencedBy && offsets.length > 0) {
      // AddOffsetsToTxn and TxnOffsetCommit, which the group coordinator answers with its
      // check of the membership; then the records' produce requests.
      await link.hop(random, 3);
      const membership = this.#fencedBy();
      if (!membership) throw new Error(UNKNOWN_MEMBER_ERROR);
      this.#port.group.checkOffsetCommit(membership);
      broker.openTransaction(this.#id, epoch, offsets, this.#timeoutMs);
      await link.hop(random, 3);
    } else {
      // AddOffsetsToTxn, TxnOffsetCommit and the records' produce requests; the offsets
      // count as pending from the first of them on.
      broker.openTransaction(this.#id, epoch, offsets, this.#timeoutMs);
      await link.hop(random, 6);
    }
    broker.checkEpoch(this.#id, epoch);
    const lost = random.chance(faults.unknownOutcomeRate) ? random.pick(['before', 'after']) : '';
    if (lost === 'before') throw new Error(NOT_COORDINATOR);
    broker.logCommit(this.#id, epoch, records, offsets);
    if (lost === 'after') throw new Error(NOT_COORDINATOR);
    await link.hop(random, 3);
    // The answer to EndTxn did not come back: logged, it completes anyway.
    if (broker.down) throw new Error(CONNECTION_ERROR);
  }

  async disconnect(): Promise<void> {
    this.#epoch = undefined;
  }
}

export class SimKafkaPort implements KafkaPort {
  readonly link: ReplicaLink;
  readonly broker: SimBroker;
  readonly group: SimGroup;
  readonly random: SimRandom;
  readonly faults: PortFaults;
  readonly note: SimNote;

  constructor(
    link: ReplicaLink,
    broker: SimBroker,
    group: SimGroup,
    random: SimRandom,
    faults: PortFaults,
    note: SimNote,
  ) {
    this.note = note;
    this.link = link;
    this.broker = broker;
    this.group = group;
    this.random = random;
    this.faults = faults;
  }

  createBatchConsumer(options: BatchConsumerOptions): GroupConsumer {
    return new SimConsumer(
      this.link,
      this.broker,
      this.group,
      this.random.fork(),
      options,
      this.faults,
      this.note,
    );
  }

  createTransactionalProducer(
    transactionalId: string,
    options: TransactionalOptions = {},
  ): PartitionProducer {
    return new SimProducer(this, transactionalId, options);
  }

  /** The records transactions made visible in `topic` with `partition`, in write order. */
  async readWhole(
    topic: string,
    partition: number,
    onRecord: (record: StoredRecord) => void,
  ): Promise<void> {
    await this.link.hop(this.random, 3);
    this.broker.check();
    const records = this.broker.visible.filter(
      (record) => record.topic === topic && record.partition === partition,
    );
    await this.link.hop(this.random, 3);
    records.forEach((record, offset) => {
      onRecord({
        offset: String(offset),
        key: record.key === null ? null : Buffer.from(record.key),
        value: record.value === null ? null : Buffer.from(record.value),
      });
    });
  }

  openTopicReader(topic: string): TopicReader {
    return {
      readOn: async (partition, from, onRecord) => {
        await this.link.hop(this.random, 3);
        this.broker.check();
        const records = this.broker.visible.filter(
          (record) => record.topic === topic && record.partition === partition,
        );
        await this.link.hop(this.random, 3);
        const start = Number(from);
        for (let offset = start; offset < records.length; offset++) {
          const record = records[offset];
          if (!record) continue;
          onRecord({
            offset: String(offset),
            key: record.key === null ? null : Buffer.from(record.key),
            value: record.value === null ? null : Buffer.from(record.value),
          });
        }
        return String(Math.max(start, records.length));
      },
      close: async () => undefined,
    };
  }

  async committedOffsets(_groupId: string, topic: string): Promise<Map<number, PartitionOffset>> {
    await this.link.hop(this.random, 3);
    this.broker.check();
    const offsets = new Map<number, PartitionOffset>();
    for (let partition = 0; partition < this.broker.partitions; partition++) {
      const entry = this.broker.committed(partition);
      offsets.set(partition, {
        topic,
        partition,
        offset: entry?.offset ?? '-1',
        metadata: entry?.metadata ?? null,
      });
    }
    await this.link.hop(this.random, 3);
    return offsets;
  }

  /** OffsetFetch with require_stable, asked again on the real reader's schedule while a partition is held. */
  async stableOffsets(
    _groupId: string,
    topic: string,
    partitions: readonly number[],
    waitMs: number,
  ): Promise<Map<number, PartitionOffset>> {
    const deadline = Date.now() + waitMs;
    const offsets = new Map<number, PartitionOffset>();
    let held = [...partitions];
    for (let attempt = 0; ; attempt++) {
      await this.link.hop(this.random, 3);
      const stillHeld: number[] = [];
      for (const partition of held) {
        const answer = this.broker.stableCommitted(partition);
        if (!answer.stable) {
          stillHeld.push(partition);
          continue;
        }
        offsets.set(partition, {
          topic,
          partition,
          offset: answer.entry?.offset ?? '-1',
          metadata: answer.entry?.metadata ?? null,
        });
      }
      await this.link.hop(this.random, 3);
      held = stillHeld;
      if (held.length === 0) return offsets;
      const waitFor = stableRetryWaitMs(attempt);
      if (Date.now() + waitFor > deadline) {
        throw new Error(
          `the offsets of ${topic} partitions ${held.join(', ')} are still held by an open transaction after ${waitMs} ms`,
        );
      }
      await sleep(waitFor);
    }
  }

  /** The simulated logs are never trimmed: every partition begins at 0. */
  async logBounds(_topic: string): Promise<Map<number, LogBounds>> {
    await this.link.hop(this.random, 3);
    this.broker.check();
    const bounds = new Map<number, LogBounds>();
    for (let partition = 0; partition < this.broker.partitions; partition++) {
      bounds.set(partition, { start: '0', end: String(this.broker.endOffset(partition)) });
    }
    await this.link.hop(this.random, 3);
    return bounds;
  }

  async isStableMember(_groupId: string, memberId: string | undefined): Promise<boolean> {
    await this.link.hop(this.random, 3);
    const stable = this.group.isStableMember(memberId);
    await this.link.hop(this.random, 3);
    return stable;
  }
}
