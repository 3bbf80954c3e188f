/**
 * The ACL a refused Kafka request needed, and the line an operator runs to grant it:
 * every refusal at start names the resource, the operation and a `kafka-acls.sh` command
 * in the form docs/kafka-security.md uses, so the fix can be pasted rather than looked up.
 */
import type { KafkaSecurity } from '../config/kafka-security.ts';
import { FerryError } from '../errors.ts';
import { kafkaRefusalOf } from './kafka-security.ts';

export type AclResource = 'Topic' | 'Group' | 'TransactionalId';
export type AclOperation = 'Read' | 'Write' | 'Delete' | 'DescribeConfigs' | 'Create';

/** What a request needs granted: operations on one resource (a literal name or a prefix). */
export interface AclNeed {
  readonly resource: AclResource;
  readonly name: string;
  readonly pattern: 'literal' | 'prefixed';
  /** Any one of them would do when they stand for an implied Describe; all otherwise. */
  readonly operations: readonly AclOperation[];
}

const RESOURCE_FLAGS: Record<AclResource, string> = {
  Topic: '--topic',
  Group: '--group',
  TransactionalId: '--transactional-id',
};

/**
 * The principal the grant names: the SASL user for PLAIN and SCRAM; for a client
 * certificate or a token the broker's mapping decides, which ferry cannot know.
 */
export function principalOf(security: KafkaSecurity | undefined): string {
  const sasl = security?.sasl;
  if (sasl && sasl.mechanism !== 'OAUTHBEARER') return `User:${sasl.username}`;
  if (!security?.tls && !sasl) return 'User:ANONYMOUS';
  return 'User:<ferry’s principal>';
}

/** The `kafka-acls.sh` line granting `need` to `principal`, as docs/kafka-security.md writes them. */
export function aclCommand(need: AclNeed, principal: string): string {
  return [
    'kafka-acls.sh --bootstrap-server "$BOOTSTRAP" --command-config admin.properties --add',
    `--allow-principal ${principal}`,
    ...need.operations.map((operation) => `--operation ${operation}`),
    ...(need.pattern === 'prefixed' ? ['--resource-pattern-type prefixed'] : []),
    `${RESOURCE_FLAGS[need.resource]} ${need.name}`,
  ].join(' ');
}

/** "Write on Topic ferry.results", "Read on Group ferry.dlq-replay* (prefixed)". */
export function describeNeed(need: AclNeed, joiner = ' and '): string {
  const name = need.pattern === 'prefixed' ? `${need.name}* (prefixed)` : need.name;
  return `${need.operations.join(joiner)} on ${need.resource} ${name}`;
}

/**
 * `error` as the refusal of `need` when Kafka refused it for lack of an ACL: the line
 * names the resource, the operation and the command that grants it. Undefined otherwise.
 */
export function aclRefusal(
  error: unknown,
  need: AclNeed,
  principal: string,
  what: string,
): FerryError | undefined {
  const found = kafkaRefusalOf(error);
  if (found?.refusal !== 'kafka_authorization') return undefined;
  const message = error instanceof Error ? error.message : String(error);
  return missingAcl(need, principal, `${found.detail}; ${what}: ${message}`, error);
}

/** The refusal of a missing ACL, with the grant that fixes it. */
export function missingAcl(
  need: AclNeed,
  principal: string,
  detail: string,
  cause?: unknown,
): FerryError {
  return new FerryError(
    'kafka_authorization',
    `Kafka denied an operation ferry needs: an ACL is missing: ${principal} needs ${describeNeed(need)}; grant it with: ${aclCommand(need, principal)} (${detail})`,
    { cause, retryable: false },
  );
}
