/**
 * The probes of the start-up access check (kafka-access.ts) that need more than one
 * admin call: reading as a group member, deleting a group, writing in transactions. Each does what
 * ferry will do later, on throwaway resources under the same ACL prefixes, and leaves
 * nothing a read_committed reader can see.
 */
import { FerryError } from '../errors.ts';
import type { AclNeed } from './acl-grants.ts';
import { kafkaRefusalOf } from './kafka-security.ts';
import type { Admin, Kafka } from './kafkajs.ts';
import { commitAsStandalone } from './standalone-commit.ts';

/** The grant a refusal of a step calls for, or how to pick it by the refusal's Kafka code. */
export type NeedOf = AclNeed | ((refusalType: string) => AclNeed | undefined);

/**
 * Runs one probe step: classifies its failure (a refusal with the grant `need` names),
 * retries passing errors (access-steps.ts).
 */
export type Step = <T>(what: string, action: () => Promise<T>, need?: NeedOf) => Promise<T>;

function topicRead(topic: string): AclNeed {
  return { resource: 'Topic', name: topic, pattern: 'literal', operations: ['Read'] };
}

/**
 * Each topic is read as a member of a throwaway group would (Group READ, Topic READ),
 * then the group is deleted (Group DELETE), as the dead-letter replay does with its
 * readers and the control-topic follower with its group. No group is joined: an offset commit outside any membership is checked for
 * the same two grants (standalone-commit.ts), without the broker's wait for a new
 * group's first member. One topic a request, so that a refusal names its topic.
 */
export async function probeReading(
  kafka: Kafka,
  admin: Admin,
  step: Step,
  probe: {
    readonly groupId: string;
    readonly topics: readonly string[];
    /** The grant the group needs. */
    readonly groupNeed: AclNeed;
    readonly groupDeleteNeed: AclNeed;
    /** What the group stands for, in the step's name. */
    readonly what: string;
  },
): Promise<void> {
  const deletion = () =>
    probeGroupDeletion(admin, step, probe.groupId, probe.what, probe.groupDeleteNeed);
  try {
    for (const topic of probe.topics) {
      await step(
        `reading ${topic} as a member of group ${probe.groupId}`,
        () => commitAsStandalone(kafka, probe.groupId, topic),
        (type) => (type.startsWith('GROUP_') ? probe.groupNeed : topicRead(topic)),
      );
    }
  } catch (error: unknown) {
    // What was committed before the refusal goes too; the refusal is what is reported.
    await deletion().catch(() => undefined);
    throw error;
  }
  await deletion();
}

/**
 * Deletes `groupId` (Group DELETE), which may not exist: the broker checks the permission
 * before it looks for the group, so only a refusal matters.
 */
export async function probeGroupDeletion(
  admin: Admin,
  step: Step,
  groupId: string,
  what: string,
  need: AclNeed,
): Promise<void> {
  await step(
    `deleting ${what} ${groupId}`,
    async () => {
      try {
        await admin.deleteGroups([groupId]);
      } catch (error: unknown) {
        if (kafkaRefusalOf(error)) throw error;
      }
    },
    need,
  );
}

/**
 * Initialises a producer under each transactional id (TransactionalId WRITE) without
 * adding a partition, so nothing is written anywhere. Topic WRITE is not probed by
 * writing: an aborted probe record is a record all the same, and kafkajs's read_committed
 * filter lets some aborted records through when several aborted transactions interleave
 * (it assumes the broker lists them by first offset), so ferry's own consumer could read
 * a probe as a command. Topic WRITE is proven by {@link probeTopicWrites} instead.
 */
export async function probeTransactionalIds(
  kafka: Kafka,
  step: Step,
  transactionalIds: readonly {
    readonly id: string;
    readonly what: string;
    readonly need: AclNeed;
  }[],
): Promise<void> {
  for (const { id, what, need } of transactionalIds) {
    const producer = kafka.producer({
      transactionalId: id,
      idempotent: true,
      maxInFlightRequests: 1,
      retry: { retries: 1 },
    });
    await step(
      `initialising ${what} ${id}`,
      async () => {
        try {
          await producer.connect();
          // Nothing is added, so the abort stays local; the begin sent InitProducerId.
          const transaction = await producer.transaction();
          await transaction.abort();
        } finally {
          await producer.disconnect().catch(() => undefined);
        }
      },
      need,
    );
  }
}

/** The largest record the write probe sends (a topic limit above it is not probed). */
const PROBE_MAX_BYTES = 16 * 1024 * 1024;

/** Whether `error` (or what it wraps) is the broker refusing a record for its size. */
function isTooLarge(error: unknown, depth = 0): boolean {
  if (depth > 5 || typeof error !== 'object' || error === null) return false;
  const { type, cause, originalError } = error as {
    type?: unknown;
    cause?: unknown;
    originalError?: unknown;
  };
  if (type === 'MESSAGE_TOO_LARGE' || type === 'RECORD_LIST_TOO_LARGE') return true;
  return isTooLarge(cause, depth + 1) || isTooLarge(originalError, depth + 1);
}

/**
 * Proves Write on each topic without writing anything. One record one byte over the
 * topic's `max.message.bytes` is produced to partition 0, outside any transaction: the
 * broker checks Topic WRITE first and the record's size only then, refusing it before it
 * reaches the log. So MESSAGE_TOO_LARGE means "allowed" and a refusal means the ACL is
 * missing. Not in a transaction, so not even an abort marker is left (one would read as
 * consumer lag on the commands topic). A topic whose limit is unknown, or over
 * PROBE_MAX_BYTES, is not probed: a record that fitted would be written.
 */
export async function probeTopicWrites(
  kafka: Kafka,
  step: Step,
  topics: readonly { readonly topic: string; readonly maxMessageBytes?: number }[],
): Promise<void> {
  const producer = kafka.producer({ idempotent: false, retry: { retries: 1 } });
  try {
    for (const { topic, maxMessageBytes } of topics) {
      if (maxMessageBytes === undefined || maxMessageBytes > PROBE_MAX_BYTES) continue;
      const need: AclNeed = {
        resource: 'Topic',
        name: topic,
        pattern: 'literal',
        operations: ['Write'],
      };
      await step(
        `writing to ${topic}`,
        async () => {
          await producer.connect();
          try {
            await producer.send({
              topic,
              acks: -1,
              messages: [{ partition: 0, key: null, value: Buffer.alloc(maxMessageBytes + 1) }],
            });
          } catch (error: unknown) {
            if (!isTooLarge(error)) throw error;
            return;
          }
          throw new FerryError(
            'internal',
            `the write probe of ${topic} was accepted although it is over max.message.bytes`,
          );
        },
        need,
      );
    }
  } finally {
    await producer.disconnect().catch(() => undefined);
  }
}
