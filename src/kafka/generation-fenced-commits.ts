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

const require = createRequire(import.meta.url);

/** Where a producer's commits find the membership to carry: asked at each commit. */
export type MembershipSource = () => GroupMembership | undefined;

type KafkajsTxnOffsetCommit = Omit<TxnOffsetCommitV3, keyof GroupMembership>;

interface BrokerLike {
  readonly connectionPool: { send<T>(request: ProtocolRequest<T>): Promise<T> };
  txnOffsetCommit(request: KafkajsTxnOffsetCommit): Promise<unknown>;
  disconnect(): Promise<void>;
}

interface ProtocolErrors {
  createErrorFromCode(code: number): Error;
}

/** The protocol's code for a member the coordinator does not know. */
const UNKNOWN_MEMBER_ID = 25;

const sources = new Map<string, MembershipSource>();
let wrapped = false;
let available = false;

/** Wraps kafkajs's TxnOffsetCommit once. @returns false when kafkajs's internals are not where expected. */
function wrapTxnOffsetCommit(): boolean {
  if (wrapped) return available;
  wrapped = true;
  let Broker: { prototype: BrokerLike };
  let errors: ProtocolErrors;
  try {
    Broker = require('kafkajs/src/broker/index.js');
    errors = require('kafkajs/src/protocol/error.js');
  } catch {
    return false;
  }
  const original = Broker.prototype.txnOffsetCommit;
  if (typeof original !== 'function') return false;
  available = true;
  Broker.prototype.txnOffsetCommit = async function txnOffsetCommit(
    this: BrokerLike,
    request: KafkajsTxnOffsetCommit,
  ) {
    const source = sources.get(request.transactionalId);
    if (!source) return original.call(this, request);
    const membership = source();
    // kafkajs's own error for the code, so its retry and ferry's classification see what
    // the coordinator would have answered.
    if (!membership) throw errors.createErrorFromCode(UNKNOWN_MEMBER_ID);
    try {
      return await this.connectionPool.send(txnOffsetCommitV3({ ...request, ...membership }));
    } catch (error: unknown) {
      // As kafkajs's own requests: a closed connection is dropped so the next one reconnects.
      if ((error as { name?: unknown } | null)?.name === 'KafkaJSConnectionClosedError') {
        await this.disconnect();
      }
      throw error;
    }
  };
  return true;
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
