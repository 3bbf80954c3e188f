/**
 * Against the real broker: offsets committed in a transaction with the group's
 * generation (TxnOffsetCommit v3) are refused from a member of an older generation or
 * one not in the group, and accepted from the current member; while that transaction is
 * open, OffsetFetch v7 with require_stable answers UNSTABLE_OFFSET_COMMIT for the
 * partition, and the committed offset once it ends. kafkajs encodes neither request.
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  type GroupMembership,
  kafkajsHighestVersions,
  offsetFetchV7,
  type ProtocolRequest,
  txnOffsetCommitV3,
} from '../../src/kafka/group-fenced-offsets.ts';
import { AssignerProtocol, Kafka, logLevel } from '../../src/kafka/kafkajs.ts';
import { newCluster } from '../../src/kafka/kafkajs-cluster.ts';
import { createTopicsAndWait, testBrokers, uniqueTopic } from '../helpers/kafka.ts';

const UNSTABLE_OFFSET_COMMIT = 88;
const TRANSACTION_COORDINATOR = 1;

/** The parts of kafkajs's internal Broker this test drives by hand. */
interface RawBroker {
  readonly connectionPool: { send<T>(request: ProtocolRequest<T>): Promise<T> };
  joinGroup(request: {
    groupId: string;
    sessionTimeout: number;
    rebalanceTimeout: number;
    memberId: string;
    groupProtocols: { name: string; metadata: Buffer }[];
  }): Promise<{ generationId: number; memberId: string }>;
  syncGroup(request: {
    groupId: string;
    generationId: number;
    memberId: string;
    groupAssignment: { memberId: string; memberAssignment: Buffer }[];
  }): Promise<unknown>;
  initProducerId(request: {
    transactionalId: string;
    transactionTimeout: number;
  }): Promise<{ producerId: string; producerEpoch: number }>;
  addOffsetsToTxn(request: Transactional & { groupId: string }): Promise<unknown>;
  endTxn(request: Transactional & { transactionResult: boolean }): Promise<unknown>;
}
interface Transactional {
  transactionalId: string;
  producerId: string;
  producerEpoch: number;
}
interface RawCluster {
  connect(): Promise<void>;
  disconnect(): Promise<void>;
  findGroupCoordinator(query: { groupId: string; coordinatorType?: number }): Promise<RawBroker>;
}

const kafka = new Kafka({
  clientId: 'group-fenced-offsets-test',
  brokers: testBrokers(),
  logLevel: logLevel.NOTHING,
});
const cluster = newCluster(kafka) as unknown as RawCluster;
const topic = uniqueTopic('fenced-offsets');
const groupId = uniqueTopic('fenced-group');

before(async () => {
  const admin = kafka.admin();
  await admin.connect();
  try {
    await createTopicsAndWait(admin, testBrokers(), [{ topic, numPartitions: 1 }]);
  } finally {
    await admin.disconnect();
  }
  await cluster.connect();
});
after(() => cluster.disconnect());

/** Joins the group as its only member (JoinGroup, SyncGroup) and returns the membership. */
async function joinAlone(coordinator: RawBroker): Promise<GroupMembership> {
  const joined = await coordinator.joinGroup({
    groupId,
    sessionTimeout: 30_000,
    rebalanceTimeout: 30_000,
    memberId: '',
    groupProtocols: [
      {
        name: 'RoundRobinAssigner',
        metadata: AssignerProtocol.MemberMetadata.encode({
          version: 0,
          topics: [topic],
          userData: Buffer.alloc(0),
        }),
      },
    ],
  });
  await coordinator.syncGroup({
    groupId,
    generationId: joined.generationId,
    memberId: joined.memberId,
    groupAssignment: [
      {
        memberId: joined.memberId,
        memberAssignment: AssignerProtocol.MemberAssignment.encode({
          version: 0,
          assignment: { [topic]: [0] },
          userData: Buffer.alloc(0),
        }),
      },
    ],
  });
  return { generationId: joined.generationId, memberId: joined.memberId, groupInstanceId: null };
}

test('kafkajs stops at TxnOffsetCommit v1 and OffsetFetch v4: neither says the generation nor asks for stable offsets', () => {
  const { txnOffsetCommit, offsetFetch } = kafkajsHighestVersions();
  assert.ok(txnOffsetCommit < 3, `kafkajs encodes TxnOffsetCommit up to v${txnOffsetCommit}`);
  assert.ok(offsetFetch < 7, `kafkajs encodes OffsetFetch up to v${offsetFetch}`);
});

test('the group fences offsets by generation and member; an open transaction makes them unstable', async () => {
  const coordinator = await cluster.findGroupCoordinator({ groupId });
  const member = await joinAlone(coordinator);
  const transactionalId = uniqueTopic('fenced-txn');
  const txnCoordinator = await cluster.findGroupCoordinator({
    groupId: transactionalId,
    coordinatorType: TRANSACTION_COORDINATOR,
  });
  const { producerId, producerEpoch } = await txnCoordinator.initProducerId({
    transactionalId,
    transactionTimeout: 30_000,
  });
  const transactional = { transactionalId, producerId, producerEpoch };
  await txnCoordinator.addOffsetsToTxn({ ...transactional, groupId });

  const commit = (membership: GroupMembership, offset: string) =>
    coordinator.connectionPool.send(
      txnOffsetCommitV3({
        ...transactional,
        ...membership,
        groupId,
        topics: [{ topic, partitions: [{ partition: 0, offset, metadata: `intent-${offset}` }] }],
      }),
    );
  const fetchOffset = async (requireStable: boolean) => {
    const answer = await coordinator.connectionPool.send(
      offsetFetchV7({ groupId, topics: [{ topic, partitions: [0] }], requireStable }),
    );
    const partition = answer.topics[0]?.partitions[0];
    assert.ok(partition, 'the partition is answered');
    return partition;
  };

  // A member of an older generation, and one the group does not know: refused.
  await assert.rejects(commit({ ...member, generationId: member.generationId - 1 }, '3'), {
    type: 'ILLEGAL_GENERATION',
  });
  await assert.rejects(commit({ ...member, memberId: `${member.memberId}-gone` }, '3'), {
    type: 'UNKNOWN_MEMBER_ID',
  });

  // The current member: accepted into the open transaction.
  await commit(member, '5');
  const pending = await fetchOffset(true);
  assert.equal(pending.errorCode, UNSTABLE_OFFSET_COMMIT, 'held by the open transaction');
  const unstableAllowed = await fetchOffset(false);
  assert.equal(unstableAllowed.offset, '-1', 'without require_stable: the last committed, none');

  await txnCoordinator.endTxn({ ...transactional, transactionResult: true });
  // EndTxn returns before the markers are written: stable within moments.
  let stable = await fetchOffset(true);
  for (let i = 0; i < 100 && stable.errorCode === UNSTABLE_OFFSET_COMMIT; i++) {
    await sleep(50);
    stable = await fetchOffset(true);
  }
  assert.deepEqual(stable, { partition: 0, offset: '5', metadata: 'intent-5', errorCode: 0 });
});
