/**
 * ferry's ACLs in the tests: the table of docs/kafka-security.md read into rows, the rows
 * as kafkajs ACL bindings, and Kafka's own AclCommand for the documented kafka-acls.sh
 * lines. The test is the super user on the PLAINTEXT listener (secured-kafka.ts).
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import kafkajs, { type Admin } from 'kafkajs';
import { libsDir } from '../../tools/kafka/broker.ts';
import { FERRY_USER } from './secured-kafka.ts';

// kafkajs's CommonJS exports past `logLevel` are only reachable through the default export.
const { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes } = kafkajs;

const run = promisify(execFile);

/** One row of the ACL table in docs/kafka-security.md, with the names filled in. */
export interface AclRow {
  readonly row: number;
  readonly resource: 'Topic' | 'Group' | 'TransactionalId';
  readonly pattern: 'literal' | 'prefixed';
  readonly name: string;
  readonly operation: 'Read' | 'Write' | 'Delete' | 'DescribeConfigs';
}

/**
 * The ACL table of docs/kafka-security.md, its `${VARIABLE}` names replaced from `names`.
 * @throws when a row names a variable `names` lacks, or the table has no rows.
 */
export function documentedAcls(markdown: string, names: Record<string, string>): AclRow[] {
  const rows: AclRow[] = [];
  const pattern =
    /^\| (\d+) \| (Topic|Group|TransactionalId) \| (literal|prefixed) \| `([^`]+)` \| (\w+) \|/gm;
  for (const match of markdown.matchAll(pattern)) {
    const [, row, resource, kind, template, operation] = match as unknown as string[];
    const name = (template ?? '').replace(/\$\{(\w+)\}/g, (_, variable: string) => {
      const value = names[variable];
      if (value === undefined) throw new Error(`the ACL table names \${${variable}}`);
      return value;
    });
    rows.push({
      row: Number(row),
      resource: resource as AclRow['resource'],
      pattern: kind as AclRow['pattern'],
      name,
      operation: operation as AclRow['operation'],
    });
  }
  if (rows.length === 0) throw new Error('no ACL table found');
  return rows;
}

const resourceTypes = {
  Topic: AclResourceTypes.TOPIC,
  Group: AclResourceTypes.GROUP,
  TransactionalId: AclResourceTypes.TRANSACTIONAL_ID,
} as const;

const operations = {
  Read: AclOperationTypes.READ,
  Write: AclOperationTypes.WRITE,
  Delete: AclOperationTypes.DELETE,
  DescribeConfigs: AclOperationTypes.DESCRIBE_CONFIGS,
} as const;

/** A row as kafkajs's ACL binding for `principal`. */
export function aclBinding(row: AclRow, principal = `User:${FERRY_USER}`) {
  return {
    resourceType: resourceTypes[row.resource],
    resourceName: row.name,
    resourcePatternType:
      row.pattern === 'literal' ? ResourcePatternTypes.LITERAL : ResourcePatternTypes.PREFIXED,
    principal,
    host: '*',
    operation: operations[row.operation],
    permissionType: AclPermissionTypes.ALLOW,
  };
}

/** The ACLs of `principal` on the broker, as comparable strings. */
export async function describeAcls(admin: Admin, principal = `User:${FERRY_USER}`) {
  const { resources } = await admin.describeAcls({
    resourceType: AclResourceTypes.ANY,
    resourcePatternType: ResourcePatternTypes.ANY,
    principal,
    host: '*',
    operation: AclOperationTypes.ANY,
    permissionType: AclPermissionTypes.ANY,
  });
  return resources
    .flatMap((resource) =>
      resource.acls.map(
        (acl) =>
          `${resource.resourceType}/${resource.resourcePatternType}/${resource.resourceName}/${acl.operation}`,
      ),
    )
    .sort();
}

/** Removes every ACL of `principal`. */
export async function deleteAllAcls(admin: Admin, principal = `User:${FERRY_USER}`) {
  await admin.deleteAcls({
    filters: [
      {
        resourceType: AclResourceTypes.ANY,
        resourcePatternType: ResourcePatternTypes.ANY,
        principal,
        host: '*',
        operation: AclOperationTypes.ANY,
        permissionType: AclPermissionTypes.ANY,
      },
    ],
  });
}

/**
 * Runs a documented `kafka-acls.sh` line with Kafka's own AclCommand from the broker's
 * jars, against the PLAINTEXT listener (where the test is the super user).
 */
export async function kafkaAcls(commandLine: string, bootstrap: string): Promise<void> {
  const args = commandLine
    .replace(/^kafka-acls\.sh\s+/, '')
    .replace(/--command-config \S+\s*/, '')
    .replace('"$BOOTSTRAP"', bootstrap)
    .split(/\s+/)
    .filter((arg) => arg.length > 0);
  // A short-lived client JVM: the quick JIT tier and the serial collector start fastest.
  const jvm = ['-Xmx128m', '-XX:TieredStopAtLevel=1', '-XX:+UseSerialGC', '-Xshare:auto'];
  await run('java', [...jvm, '-cp', `${libsDir}/*`, 'kafka.admin.AclCommand', ...args], {
    timeout: 60_000,
  });
}

/** The ACLs take effect on the broker a moment after the answer; waits until ferry's match `expected`. */
export async function untilAcls(admin: Admin, expected: readonly string[]): Promise<void> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const actual = await describeAcls(admin);
    if (JSON.stringify(actual) === JSON.stringify([...expected].sort())) return;
    if (Date.now() > deadline) {
      throw new Error(
        `ACLs did not settle: ${JSON.stringify(actual)} != ${JSON.stringify(expected)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
