/**
 * Offsets committed inside a kafkajs transaction with the consumer group's generation and
 * member id (TxnOffsetCommit v3), so that the group coordinator refuses them from a member
 * the group has moved on from (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID) and the transaction
 * cannot commit. kafkajs (2.2.4) sends TxnOffsetCommit v1, which carries no membership:
 * any holder of the transactional id commits any partition's offset, whoever owns the
 * partition now. With the membership, a producer need not be one per partition to be
 * fenced: one per replica is, by the group itself.
 *
 * kafkajs's `Broker.txnOffsetCommit` (what its transaction's `sendOffsets` sends after
 * AddOffsetsToTxn) is wrapped once per process. A transactional id registered here has its
 * offsets sent as v3 with the membership its source gives at that moment; any other id's
 * are sent by kafkajs as before. A source that knows no membership (the member left, was
 * expelled, or never joined) fails the commit with UNKNOWN_MEMBER_ID without a request:
 * offsets of a replica outside the group must not be committed. Should kafkajs's internals
 * move, registering fails with a `kafka` error instead of committing unfenced.
 */
import { createRequire } from 'node:module';
import { FerryError } from '../errors.ts';
import {
  type GroupMembership,
  type ProtocolRequest,
  type TxnOffsetCommitV3,
  txnOffsetCommitV3,
} from './group-fenced-offsets.ts';
import type { MembershipSource } from './kafka-port.ts';
import { wrapKafkajsMethod } from './kafkajs-internals.ts';

const require = createRequire(import.meta.url);
const { createErrorFromCode } = require('kafkajs/src/protocol/error.js') as ProtocolErrors;

type KafkajsTxnOffsetCommit = Omit<TxnOffsetCommitV3, keyof GroupMembership>;

interface BrokerLike {
  readonly connectionPool: { send<T>(request: ProtocolRequest<T>): Promise<T> };
  /** What the broker answered to ApiVersions, by API key; set once connected. */
  readonly versions?: Readonly<Record<number, { readonly maxVersion: number } | undefined>>;
  disconnect(): Promise<void>;
}
type TxnOffsetCommit = (this: BrokerLike, request: KafkajsTxnOffsetCommit) => Promise<unknown>;

interface ProtocolErrors {
  createErrorFromCode(code: number): Error;
}

/** The protocol's code for a member the coordinator does not know. */
const UNKNOWN_MEMBER_ID = 25;
const TXN_OFFSET_COMMIT = 28;

const sources = new Map<string, MembershipSource>();
/** Whether kafkajs's TxnOffsetCommit is wrapped; unset until first asked. */
let available: boolean | undefined;

/** Wraps kafkajs's TxnOffsetCommit once. @returns false when kafkajs's internals are not where expected. */
function wrapTxnOffsetCommit(): boolean {
  available ??= wrapKafkajsMethod<TxnOffsetCommit>(
    'kafkajs/src/broker/index.js',
    'txnOffsetCommit',
    (original) =>
      async function txnOffsetCommit(this: BrokerLike, request: KafkajsTxnOffsetCommit) {
        const source = sources.get(request.transactionalId);
        if (!source) return original.call(this, request);
        const membership = source();
        // kafkajs's own error for the code, so its retry and ferry's classification see
        // what the coordinator would have answered.
        if (!membership) throw createErrorFromCode(UNKNOWN_MEMBER_ID);
        // Kafka 2.5 and later read v3; an older broker must not be sent what it cannot read.
        const highest = this.versions?.[TXN_OFFSET_COMMIT]?.maxVersion ?? 0;
        if (highest < 3) {
          throw new FerryError(
            'kafka',
            `offsets cannot be fenced by the group generation: the broker reads TxnOffsetCommit up to v${highest}, v3 is needed (Kafka 2.5 or later)`,
            { retryable: false },
          );
        }
        try {
          return await this.connectionPool.send(txnOffsetCommitV3({ ...request, ...membership }));
        } catch (error: unknown) {
          // As kafkajs's own requests: a closed connection is dropped so the next one reconnects.
          if ((error as { name?: unknown } | null)?.name === 'KafkaJSConnectionClosedError') {
            await this.disconnect();
          }
          throw error;
        }
      },
  );
  return available;
}

/**
 * Sends the offsets of `transactionalId`'s transactions with the membership `source` gives
 * at each commit, until the returned function removes it (a later registration of the
 * same id replaces this one, and is not removed by it).
 * @throws FerryError `kafka` when kafkajs's internals are not where expected.
 */
export function fenceOffsetsByGeneration(
  transactionalId: string,
  source: MembershipSource,
): () => void {
  if (!wrapTxnOffsetCommit()) {
    throw new FerryError(
      'kafka',
      'offsets cannot be fenced by the group generation: kafkajs is not laid out as expected',
      { retryable: false },
    );
  }
  sources.set(transactionalId, source);
  return () => {
    if (sources.get(transactionalId) === source) sources.delete(transactionalId);
  };
}
