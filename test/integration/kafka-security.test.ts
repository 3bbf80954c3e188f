/**
 * ferry against a secured Kafka (test/helpers/secured-kafka.ts): SCRAM-SHA-512 over TLS
 * with exactly the ACLs docs/kafka-security.md lists, end to end, with kcat reading a
 * result over the same listener; each ACL removed in turn, a wrong password, an unknown
 * CA and unworkable topic settings each end start-up with one line and their own exit
 * code; mutual TLS, PLAIN and OAUTHBEARER have shorter runs. One broker for the whole file.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, type TestContext, test } from 'node:test';
import { Kafka, logLevel } from 'kafkajs';
import { createEmulator, type Emulator } from '../../src/emulator/index.ts';
import { repoRoot } from '../deploy/external-tools.ts';
import { FIXTURE_RCS_SENDER, FIXTURE_SENDER, smsOperation } from '../fixtures/operations.ts';
import { loopbackEnv, TEST_API_KEY, testTopics } from '../helpers/ferry.ts';
import { type FerryProcess, spawnFerry, waitForLog } from '../helpers/ferry-process.ts';
import { createTopicsAndWait } from '../helpers/kafka.ts';
import {
  type AclRow,
  aclBinding,
  deleteAllAcls,
  documentedAcls,
  kafkaAcls,
  untilAcls,
} from '../helpers/kafka-acls.ts';
import { installKafkaShellTools, runWithKafkaTools } from '../helpers/kafka-shell-tools.ts';
import { assertNoSecrets, failedStartOf, kcatReadCommitted } from '../helpers/secured-ferry.ts';
import {
  ADMIN_PASSWORD,
  ADMIN_USER,
  FERRY_PASSWORD,
  FERRY_PLAIN_PASSWORD,
  FERRY_USER,
  type SecuredBroker,
  startSecuredBroker,
  unsecuredJwt,
} from '../helpers/secured-kafka.ts';

const docs = readFileSync(join(repoRoot, 'docs', 'kafka-security.md'), 'utf8');

let broker: SecuredBroker;
let emulator: Emulator;
let passwordFile: string;
/** Where `kafka-topics.sh` and `kafka-acls.sh` are (kafka-shell-tools.ts). */
let toolsDir: string;
const topics = testTopics();
const clientId = `${topics.group}-client`;
// As loopbackEnv names it.
const unparsedTopic = `${topics.status}.unparsed`;
const controlTopic = `${topics.group}.control`;
const dedupeTopic = `${topics.commands}.dedupe`;
// The urgent lane too: its rows of the table are proven like the others.
const urgentTopic = `${topics.commands}.urgent`;
const urgentDedupeTopic = `${dedupeTopic}.urgent`;
// Final status tracking on, with the urgent lane: every row of the table applies.
const trackingTopic = `${topics.commands}.tracking`;
const urgentTrackingTopic = `${trackingTopic}.urgent`;
const finalStatusTopic = `${topics.status}.final`;
const names = {
  FERRY_TOPIC_COMMANDS: topics.commands,
  FERRY_TOPIC_RESULTS: topics.results,
  FERRY_TOPIC_STATUS: topics.status,
  FERRY_TOPIC_DLQ: topics.dlq,
  FERRY_TOPIC_UNPARSED_CALLBACKS: unparsedTopic,
  FERRY_TOPIC_CONTROL: controlTopic,
  FERRY_TOPIC_DEDUPE: dedupeTopic,
  FERRY_TOPIC_COMMANDS_URGENT: urgentTopic,
  FERRY_TOPIC_TRACKING: trackingTopic,
  FERRY_TOPIC_STATUS_FINAL: finalStatusTopic,
  FERRY_KAFKA_GROUP: topics.group,
  FERRY_KAFKA_CLIENT_ID: clientId,
};
const acls = documentedAcls(docs, names);
const asKey = (row: AclRow) => {
  const binding = aclBinding(row);
  return `${binding.resourceType}/${binding.resourcePatternType}/${binding.resourceName}/${binding.operation}`;
};

before(async () => {
  broker = await startSecuredBroker();
  emulator = createEmulator({
    apiKey: TEST_API_KEY,
    senders: [FIXTURE_SENDER, FIXTURE_RCS_SENDER],
    seed: 11,
  });
  await emulator.start();
  toolsDir = await mkdtemp(join(tmpdir(), 'ferry-kafka-tools-'));
  await installKafkaShellTools(toolsDir);
  passwordFile = join(broker.certificates.dir, 'ferry-password');
  // As a Kubernetes secret volume leaves it: the value and a trailing newline.
  await writeFile(passwordFile, `${FERRY_PASSWORD}\n`);
  // Pre-created by the operator (the super user): ferry has no Create ACL.
  await createTopicsAndWait(
    broker.admin,
    [broker.plaintext],
    [
      ...[
        topics.commands,
        topics.results,
        topics.status,
        topics.dlq,
        unparsedTopic,
        urgentTopic,
        finalStatusTopic,
      ].map((topic) => ({ topic, numPartitions: 2, replicationFactor: 1 })),
      {
        topic: controlTopic,
        numPartitions: 1,
        replicationFactor: 1,
        configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
      },
      ...[dedupeTopic, urgentDedupeTopic].map((topic) => ({
        topic,
        numPartitions: 2,
        replicationFactor: 1,
        configEntries: [{ name: 'cleanup.policy', value: 'compact,delete' }],
      })),
      ...[trackingTopic, urgentTrackingTopic].map((topic) => ({
        topic,
        numPartitions: 2,
        replicationFactor: 1,
        configEntries: [{ name: 'cleanup.policy', value: 'compact' }],
      })),
    ],
  );
});

after(async () => {
  if (toolsDir) await rm(toolsDir, { recursive: true, force: true });
  await emulator?.stop();
  await broker?.stop();
});

/** ferry over SASL_SSL with SCRAM-SHA-512, the password from a file. */
function scramEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...loopbackEnv({
      brokers: broker.saslSsl,
      group: topics.group,
      clientId,
      topics,
      gatewayUrl: emulator.url,
      apiKey: TEST_API_KEY,
    }),
    FERRY_KAFKA_SECURITY_PROTOCOL: 'SASL_SSL',
    FERRY_KAFKA_TLS_CA_FILE: broker.certificates.caFile,
    FERRY_KAFKA_SASL_MECHANISM: 'SCRAM-SHA-512',
    FERRY_KAFKA_SASL_USERNAME: FERRY_USER,
    FERRY_KAFKA_SASL_PASSWORD_FILE: passwordFile,
    FERRY_BATCH_LINGER_MS: '20',
    FERRY_REQUEST_TIMEOUT_MS: '2000',
    FERRY_SHUTDOWN_GRACE_MS: '3000',
    FERRY_KAFKA_SESSION_TIMEOUT_MS: '6000',
    FERRY_TOPIC_COMMANDS_URGENT: urgentTopic,
    FERRY_STATUS_TRACKING: 'true',
    ...extra,
  };
}

async function grantAll(): Promise<void> {
  await deleteAllAcls(broker.admin);
  await broker.admin.createAcls({ acl: acls.map((row) => aclBinding(row)) });
  await untilAcls(broker.admin, acls.map(asKey));
}

const SECRETS = [FERRY_PASSWORD, FERRY_PLAIN_PASSWORD, TEST_API_KEY];

async function produceCommands(ids: readonly number[]): Promise<void> {
  const producer = new Kafka({
    clientId: 'ferry-security-test-producer',
    brokers: [broker.plaintext],
    logLevel: logLevel.NOTHING,
  }).producer();
  await producer.connect();
  try {
    await producer.send({
      topic: topics.commands,
      messages: ids.map((id) => ({ key: String(id), value: JSON.stringify(smsOperation(id)) })),
    });
  } finally {
    await producer.disconnect();
  }
}

/** Committed results over SASL_SSL + SCRAM-SHA-512 as the admin user, read by kcat. */
function kcatRead(topic: string): Promise<string[]> {
  return kcatReadCommitted(broker.saslSsl, topic, {
    username: ADMIN_USER,
    password: ADMIN_PASSWORD,
    caFile: broker.certificates.caFile,
  });
}

async function untilResults(ids: readonly number[], timeoutMs = 30_000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const lines = await kcatRead(topics.results);
    const keys = new Set(lines.map((line) => line.split('\t')[0]));
    if (ids.every((id) => keys.has(String(id)))) return lines;
    if (Date.now() > deadline) throw new Error(`results so far: ${lines.join('\n')}`);
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
}

async function stopRunning(ferry: FerryProcess): Promise<void> {
  ferry.child.kill('SIGTERM');
  assert.equal(await ferry.exited(), 0, ferry.output());
  assertNoSecrets(ferry.output(), SECRETS);
}

function failedStart(t: TestContext, env: Record<string, string>, exitCode: number, line: RegExp) {
  return failedStartOf(t, env, { exitCode, line, secrets: SECRETS });
}

/** The documented defaults, for the docs' own commands. */
const DEFAULT_NAMES = {
  FERRY_TOPIC_COMMANDS: 'ferry.commands',
  FERRY_TOPIC_RESULTS: 'ferry.results',
  FERRY_TOPIC_STATUS: 'ferry.status',
  FERRY_TOPIC_DLQ: 'ferry.dlq',
  FERRY_TOPIC_UNPARSED_CALLBACKS: 'ferry.callbacks.unparsed',
  FERRY_TOPIC_CONTROL: 'ferry.control',
  FERRY_TOPIC_DEDUPE: 'ferry.dedupe',
  FERRY_TOPIC_COMMANDS_URGENT: 'ferry.commands.urgent',
  FERRY_TOPIC_TRACKING: 'ferry.tracking',
  FERRY_TOPIC_STATUS_FINAL: 'ferry.status.final',
  FERRY_KAFKA_GROUP: 'ferry',
  FERRY_KAFKA_CLIENT_ID: 'ferry',
};

/** The message of a fatal JSON log line. */
function messageOf(line: string): string {
  return (JSON.parse(line) as { msg: string }).msg;
}

test('the documented kafka-topics.sh and kafka-acls.sh commands, run as written: exactly the ACL table, and ferry starts without Create', async (t) => {
  const commands = [...docs.matchAll(/^kafka-acls\.sh .+$/gm)].map((match) => match[0]);
  assert.ok(commands.length > 0);
  await deleteAllAcls(broker.admin);
  // Two at a time: each is a JVM, and the machine has two cores.
  for (let i = 0; i < commands.length; i += 2) {
    await Promise.all(
      commands.slice(i, i + 2).map((command) => kafkaAcls(command, broker.plaintext)),
    );
  }
  const defaults = documentedAcls(docs, DEFAULT_NAMES);
  await untilAcls(broker.admin, defaults.map(asKey));

  const block = /```sh\n((?:(?!```)[\s\S])*?kafka-topics\.sh --[\s\S]*?)```/.exec(docs)?.[1];
  assert.ok(block, 'the topic block of Topic settings');
  const created = await runWithKafkaTools(block, toolsDir, broker.plaintext);
  assert.equal(created.match(/^Created topic /gm)?.length, 12, created);

  const env = {
    ...scramEnv(),
    ...DEFAULT_NAMES,
    FERRY_TOPIC_REPLICATION_FACTOR: '1',
    FERRY_TOPIC_MIN_INSYNC_REPLICAS: '1',
  };
  const ferry = spawnFerry(t, env);
  await waitForLog(ferry, 'ferry is running', 60_000);
  assert.doesNotMatch(ferry.output(), /created the missing topics/);
  await stopRunning(ferry);

  // A topic the docs' commands did not create, which ferry may Describe but not create:
  // the line names it with both fixes, and the kafka-topics.sh line it gives works.
  const extra = { ...DEFAULT_NAMES, FERRY_TOPIC_CONTROL: 'ferry.control.second' };
  const extraRows = documentedAcls(docs, extra).filter(
    (row) => row.name === 'ferry.control.second',
  );
  assert.equal(extraRows.length, 2);
  await broker.admin.createAcls({ acl: extraRows.map((row) => aclBinding(row)) });
  await untilAcls(broker.admin, [...defaults, ...extraRows].map(asKey));
  const line = messageOf(
    await failedStart(t, { ...env, ...extra }, 77, /ferry\.control\.second does not exist/),
  );
  assert.match(
    line,
    /kafka-acls\.sh --bootstrap-server "\$BOOTSTRAP" --command-config admin\.properties --add --allow-principal User:ferry --operation Create --topic ferry\.control\.second/,
  );
  const create = /(kafka-topics\.sh [^;]*);/.exec(line)?.[1];
  assert.ok(create, line);
  assert.match(
    create,
    /--topic ferry\.control\.second --partitions 1 .*--config cleanup\.policy=compact/,
  );
  await runWithKafkaTools(create, toolsDir, broker.plaintext);
  const second = spawnFerry(t, { ...env, ...extra });
  await waitForLog(second, 'ferry is running', 60_000);
  await stopRunning(second);
  await deleteAllAcls(broker.admin);
});

test('SCRAM-SHA-512 over TLS with exactly the documented ACLs: commands in, one result each out, read by kcat', async (t) => {
  await grantAll();
  const ferry = spawnFerry(t, scramEnv());
  await waitForLog(ferry, 'ferry is running', 60_000);
  const ids = [41_001, 41_002, 41_003, 41_004, 41_005];
  await produceCommands(ids);
  const lines = await untilResults(ids);
  const keys = lines.map((line) => line.split('\t')[0]);
  assert.deepEqual([...keys].sort(), ids.map(String), 'one committed result per command');
  for (const line of lines) {
    const value = JSON.parse(line.slice(line.indexOf('\t') + 1)) as {
      success?: boolean;
      stage?: string;
    };
    assert.equal(value.success, true, line);
    assert.equal(value.stage, 'upstream', line);
  }
  assert.match(ferry.output(), /"FERRY_KAFKA_SASL_PASSWORD":"\[redacted\]"/);
  await stopRunning(ferry);
});

/** The `kafka-acls.sh` option naming a row's resource, as the docs write it. */
function resourceOption(row: AclRow): string {
  const flag = { Topic: '--topic', Group: '--group', TransactionalId: '--transactional-id' }[
    row.resource
  ];
  return `${row.pattern === 'prefixed' ? '--resource-pattern-type prefixed ' : ''}${flag} ${row.name}`;
}

test('removing any one documented ACL ends start-up with exit 77 and one line naming it and the command that grants it', async (t) => {
  await grantAll();
  const env = scramEnv();
  for (const row of acls) {
    const name = `without #${row.row} ${row.resource} ${row.name} ${row.operation}`;
    const binding = aclBinding(row);
    await broker.admin.deleteAcls({ filters: [binding] });
    await untilAcls(broker.admin, acls.filter((other) => other !== row).map(asKey));
    await t.test(name, async (t) => {
      const line = messageOf(
        await failedStart(
          t,
          env,
          77,
          /ferry could not start: Kafka denied an operation ferry needs: an ACL is missing.*(TOPIC|GROUP|TRANSACTIONAL_ID)_AUTHORIZATION_FAILED/,
        ),
      );
      const grant = `kafka-acls.sh --bootstrap-server "$BOOTSTRAP" --command-config admin.properties --add --allow-principal User:${FERRY_USER} --operation ${row.operation} ${resourceOption(row)}`;
      assert.ok(line.includes(` needs ${row.operation} on ${row.resource} ${row.name}`), line);
      assert.ok(line.includes(`grant it with: ${grant} (`), `${grant}\nin\n${line}`);
      // The grant the line gives, run as it is, is what was missing.
      await kafkaAcls(grant, broker.plaintext);
      await untilAcls(broker.admin, acls.map(asKey));
    });
    // Back whatever the subtest did, for the next one.
    await broker.admin.createAcls({ acl: [binding] });
    await untilAcls(broker.admin, acls.map(asKey));
  }
});

test('a wrong SCRAM password ends start-up with exit 73', async (t) => {
  await grantAll();
  const wrong = join(broker.certificates.dir, 'wrong-password');
  await writeFile(wrong, 'not-the-password\n');
  await failedStart(
    t,
    scramEnv({ FERRY_KAFKA_SASL_PASSWORD_FILE: wrong }),
    73,
    /Kafka refused ferry’s SASL credentials.*SASL_AUTHENTICATION_FAILED/,
  );
});

test('a broker certificate from an unknown CA ends start-up with exit 74', async (t) => {
  const line = await failedStart(
    t,
    scramEnv({ FERRY_KAFKA_TLS_CA_FILE: broker.certificates.otherCaFile }),
    74,
    /the TLS handshake with Kafka failed/,
  );
  assert.match(
    line,
    /UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT/,
  );
});

test('topic settings that cannot work end start-up with exit 78', async (t) => {
  await grantAll();
  await failedStart(
    t,
    scramEnv({ FERRY_RECORD_MAX_BYTES: String(2 * 1024 * 1024) }),
    78,
    /max\.message\.bytes=\d+, below FERRY_RECORD_MAX_BYTES=2097152/,
  );
});

test('mutual TLS: the client certificate is the identity; without it start-up ends with exit 74', async (t) => {
  await grantAll();
  const { caFile, clientCertFile, clientKeyFile } = broker.certificates;
  const mtlsEnv = {
    ...scramEnv(),
    FERRY_KAFKA_BROKERS: broker.mtls,
    FERRY_KAFKA_SECURITY_PROTOCOL: 'SSL',
    FERRY_KAFKA_TLS_CA_FILE: caFile,
    FERRY_KAFKA_SASL_MECHANISM: '',
    FERRY_KAFKA_SASL_USERNAME: '',
    FERRY_KAFKA_SASL_PASSWORD_FILE: '',
  };
  await failedStart(t, mtlsEnv, 74, /the TLS handshake with Kafka failed/);
  const ferry = spawnFerry(t, {
    ...mtlsEnv,
    FERRY_KAFKA_TLS_CERT_FILE: clientCertFile,
    FERRY_KAFKA_TLS_KEY_FILE: clientKeyFile,
  });
  await waitForLog(ferry, 'ferry is running', 60_000);
  await produceCommands([42_001]);
  await untilResults([42_001]);
  await stopRunning(ferry);
});

test('SASL PLAIN over TLS starts with the same ACLs', async (t) => {
  await grantAll();
  const ferry = spawnFerry(
    t,
    scramEnv({
      FERRY_KAFKA_SASL_MECHANISM: 'PLAIN',
      FERRY_KAFKA_SASL_PASSWORD_FILE: '',
      FERRY_KAFKA_SASL_PASSWORD: FERRY_PLAIN_PASSWORD,
    }),
  );
  await waitForLog(ferry, 'ferry is running', 60_000);
  await stopRunning(ferry);
});

test('OAUTHBEARER: the token a command prints is presented; a command that fails ends start-up with exit 73', async (t) => {
  await grantAll();
  const tokenFile = join(broker.certificates.dir, 'token.jwt');
  await writeFile(tokenFile, unsecuredJwt(FERRY_USER));
  const oauthEnv = scramEnv({
    FERRY_KAFKA_SASL_MECHANISM: 'OAUTHBEARER',
    FERRY_KAFKA_SASL_USERNAME: '',
    FERRY_KAFKA_SASL_PASSWORD_FILE: '',
  });
  await failedStart(
    t,
    { ...oauthEnv, FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND: 'exit 9' },
    73,
    /OAUTHBEARER token command failed \(9\)/,
  );
  const ferry = spawnFerry(t, {
    ...oauthEnv,
    FERRY_KAFKA_SASL_OAUTHBEARER_TOKEN_COMMAND: `cat '${tokenFile}'`,
  });
  await waitForLog(ferry, 'ferry is running', 60_000);
  await stopRunning(ferry);
});
