/**
 * An offset commit outside any group membership (generation -1, no member id), the way
 * Kafka's Java client commits for a consumer that assigns its partitions itself. The
 * broker checks Group READ and Topic READ before it stores anything, so the access check
 * proves "may read this topic as a member of this group" without joining the group:
 * joining a new group waits the broker's `group.initial.rebalance.delay.ms` (3 s by
 * default), a commit does not. kafkajs has no public call for it.
 */
import type { Kafka } from './kafkajs.ts';
import { newCluster } from './kafkajs-cluster.ts';

/**
 * Commits offset 0 of partition 0 of `topic` for `groupId` without joining it.
 * @throws kafkajs's error: GROUP_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED, …;
 *   Error when kafkajs no longer has the hook.
 */
export async function commitAsStandalone(
  kafka: Kafka,
  groupId: string,
  topic: string,
): Promise<void> {
  const cluster = newCluster(kafka);
  try {
    await cluster.connect();
    const coordinator = await cluster.findGroupCoordinator({ groupId });
    await coordinator.offsetCommit({
      groupId,
      groupGenerationId: -1,
      memberId: '',
      retentionTime: -1,
      topics: [{ topic, partitions: [{ partition: 0, offset: '0' }] }],
    });
  } finally {
    await cluster.disconnect().catch(() => undefined);
  }
}
