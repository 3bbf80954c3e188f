/**
 * One transactional producer for a lane's partitions (FERRY_TRANSACTIONS=lane): the
 * commits that partitions ask for while a transaction is in flight wait and go together
 * in the next one, so the broker writes one transaction (and its markers) where it would
 * write one per partition. Commits asked for in the same event-loop turn start together.
 *
 * A shared transactional id fences nothing of another replica. What fences here is the
 * group's membership: each commit carries the membership kafkajs held when its batches
 * were handed over, and the group coordinator refuses the offsets of a generation it has
 * moved on from (TxnOffsetCommit v3, `fencedBy`), failing the transaction whole; only
 * commits of one membership share a transaction, and a commit whose partition moved
 * while it waited is not sent (`stillCurrent`). A partition's next owner reads its offset
 * stable (`KafkaPort.stableOffsets`), after this replica's transaction holding it ended.
 *
 * Outcomes: `committed`; `refused` (the coordinator refused the membership: nothing of it
 * committed, the group has moved on); `unfenced` (nothing sent: see LaneOutcome);
 * `failed` (the outcome may be unknown: the producer is dropped, and the next commit
 * initialises a new one, which completes or aborts the transaction before anything else
 * is asked).
 */
import type {
  GroupMembership,
  KafkaPort,
  MembershipSource,
  OutboundRecord,
  PartitionOffset,
  PartitionProducer,
} from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';

/**
 * How long the broker lets a lane transaction stay open: a frozen replica's open
 * transaction holds the takeover of its partitions (their stable offset reads) until the
 * broker aborts it. As Kafka Streams's exactly-once default; a commit takes milliseconds.
 */
export const LANE_TRANSACTION_TIMEOUT_MS = 10_000;

/** The lane producer's transactional id: this process's own (`instanceId` is new at each start). */
export function laneTransactionalId(
  prefix: string,
  groupId: string,
  topic: string,
  instanceId: string,
): string {
  return `${prefix}-${groupId}-${topic}-lane-${instanceId}`;
}

export interface LaneTransactionsOptions {
  readonly kafka: KafkaPort;
  readonly groupId: string;
  /** This process's own: it fences only an earlier producer of this process. */
  readonly transactionalId: string;
  /** How long the broker lets one of its transactions stay open, ms. */
  readonly transactionTimeoutMs: number;
  readonly logger: Logger;
  /** A transaction failed (counted as the per-partition ones are). */
  readonly onFailure?: () => void;
}

export interface LaneCommit {
  readonly records: readonly OutboundRecord[];
  readonly offset: PartitionOffset;
  /**
   * The membership to commit with, asked when its transaction is put together: the one its
   * batches were fetched under, or, for an intent written at an assignment, the consumer's
   * (known once its join returned, just after the assignment was told).
   */
  readonly membership: MembershipSource;
  /**
   * Asked with the membership, when its transaction is put together: false when the
   * partition was given up or moved while the commit waited (it is then not sent).
   */
  readonly stillCurrent?: () => boolean;
}

/**
 * `unfenced`: nothing was sent, because no membership was known, the partition was no
 * longer current when the transaction was put together, or the lane was closed.
 */
export type LaneOutcome = 'committed' | 'refused' | 'failed' | 'unfenced';

/** The coordinator's refusals of a membership (protocol codes 22, 25, 27, 82). */
const REFUSED_TYPES: ReadonlySet<string> = new Set([
  'ILLEGAL_GENERATION',
  'UNKNOWN_MEMBER_ID',
  'REBALANCE_IN_PROGRESS',
  'FENCED_INSTANCE_ID',
]);
/** The same refusals by kafkajs's texts, for an error that carries no type (the simulator's). */
const REFUSED_TEXTS =
  /Specified group generation id is not valid|The coordinator is not aware of this member|The group is rebalancing|same group instance id/;

/** Whether `error`, or an error it was caused by, is a refusal of the membership. */
function refusal(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 8; depth++) {
    const type = (e as { type?: unknown }).type;
    if (typeof type === 'string' && REFUSED_TYPES.has(type)) return true;
    e = e.cause;
  }
  const message = error instanceof Error ? error.message : String(error);
  return REFUSED_TEXTS.test(message);
}

interface Waiting {
  readonly commit: LaneCommit;
  readonly resolve: (outcome: LaneOutcome) => void;
  /** Asked once, when the next transaction is put together. */
  membership?: GroupMembership | undefined;
}

const membershipKey = (m: GroupMembership): string => `${m.generationId}/${m.memberId}`;

export class LaneTransactions {
  readonly #options: LaneTransactionsOptions;
  #queue: Waiting[] = [];
  #writing = false;
  #scheduled = false;
  #producer: Promise<PartitionProducer> | undefined;
  /** The membership the transaction in flight commits with. */
  #current: GroupMembership | undefined;
  #transactions = 0;
  #commits = 0;
  #closed = false;

  constructor(options: LaneTransactionsOptions) {
    this.#options = options;
  }

  /** Transactions and the partitions' commits they carried, for tests and the log. */
  get stats(): { readonly transactions: number; readonly commits: number } {
    return { transactions: this.#transactions, commits: this.#commits };
  }

  /** Commits `commit` in the lane's next transaction. Never rejects. */
  commit(commit: LaneCommit): Promise<LaneOutcome> {
    if (this.#closed) return Promise.resolve('unfenced');
    return new Promise<LaneOutcome>((resolve) => {
      this.#queue.push({ commit, resolve });
      if (!this.#writing && !this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => {
          this.#scheduled = false;
          if (!this.#writing) void this.#next();
        });
      }
    });
  }

  async #next(): Promise<void> {
    for (const waiting of this.#queue) {
      if ('membership' in waiting) continue;
      const current = !this.#closed && (waiting.commit.stillCurrent?.() ?? true);
      waiting.membership = current ? waiting.commit.membership() : undefined;
    }
    const unfenced = this.#queue.filter((w) => w.membership === undefined);
    for (const waiting of unfenced) waiting.resolve('unfenced');
    this.#queue = this.#queue.filter((w) => w.membership !== undefined);
    const membership = this.#queue[0]?.membership;
    if (!membership) return;
    const key = membershipKey(membership);
    const taken = this.#queue.filter((w) => w.membership && membershipKey(w.membership) === key);
    this.#queue = this.#queue.filter((w) => !taken.includes(w));
    this.#writing = true;
    const outcome = await this.#transaction(
      taken.map((w) => w.commit),
      membership,
    );
    this.#writing = false;
    for (const waiting of taken) waiting.resolve(outcome);
    if (this.#queue.length > 0) void this.#next();
  }

  async #transaction(
    commits: readonly LaneCommit[],
    membership: GroupMembership,
  ): Promise<LaneOutcome> {
    const { groupId, logger } = this.#options;
    try {
      const producer = await this.#connected();
      this.#current = membership;
      await producer.commit(
        commits.flatMap((c) => c.records),
        groupId,
        commits.map((c) => c.offset),
      );
      this.#transactions += 1;
      this.#commits += commits.length;
      return 'committed';
    } catch (error: unknown) {
      const message = error instanceof Error ? error.message : String(error);
      this.#options.onFailure?.();
      if (refusal(error)) {
        logger.info(
          { generationId: membership.generationId, partitions: commits.length },
          'the group refused the offsets of this generation: its batches are read again',
        );
        // Its abort may not have reached the broker: a new producer ends it for sure.
        await this.#drop();
        return 'refused';
      }
      logger.warn({ err: message, partitions: commits.length }, 'lane transaction failed');
      await this.#drop();
      return 'failed';
    } finally {
      this.#current = undefined;
    }
  }

  #connected(): Promise<PartitionProducer> {
    if (!this.#producer) {
      const { kafka, transactionalId, transactionTimeoutMs } = this.#options;
      const created = kafka.createTransactionalProducer(transactionalId, {
        fencedBy: () => this.#current,
        transactionTimeoutMs,
      });
      const connecting = created.connect().then(() => created);
      connecting.catch(() => {
        if (this.#producer === connecting) this.#producer = undefined;
      });
      this.#producer = connecting;
    }
    return this.#producer;
  }

  async #drop(): Promise<void> {
    const producer = this.#producer;
    this.#producer = undefined;
    await producer?.then((p) => p.disconnect()).catch(() => undefined);
  }

  /**
   * Resolves once the lane has an initialised producer: after a failed transaction, that
   * initialisation completed or aborted it, so what it did can be read.
   */
  async ready(): Promise<void> {
    if (this.#closed) throw new Error('the lane transactions are closed');
    await this.#connected();
  }

  /** Drops the producer for good: commits asked for later are not sent (`unfenced`). */
  close(): Promise<void> {
    this.#closed = true;
    return this.#drop();
  }
}
