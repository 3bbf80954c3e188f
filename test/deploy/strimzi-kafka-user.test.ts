/**
 * deploy/strimzi/kafka-user.yaml grants exactly the ACLs docs/kafka-security.md lists
 * (with the default names), and stays out of every kustomize build: the KafkaUser CRD
 * exists only where Strimzi is installed.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { documentedAcls } from '../helpers/kafka-acls.ts';
import { type KubeObject, kustomizeBuild, parseYamlDocuments, repoRoot } from './external-tools.ts';

interface StrimziAcl {
  resource: { type: string; name: string; patternType: string };
  operations: string[];
  host: string;
}

const defaults = {
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

test('the Strimzi KafkaUser has SCRAM-SHA-512 and exactly the documented ACLs', () => {
  const [user] = parseYamlDocuments(
    readFileSync(join(repoRoot, 'deploy/strimzi/kafka-user.yaml'), 'utf8'),
  ) as [KubeObject & { apiVersion: string; spec: Record<string, unknown> }];
  assert.equal(user.kind, 'KafkaUser');
  assert.equal(user.apiVersion, 'kafka.strimzi.io/v1beta2');
  assert.ok(user.metadata.labels?.['strimzi.io/cluster']);
  const spec = user.spec as {
    authentication: { type: string };
    authorization: { type: string; acls: StrimziAcl[] };
  };
  assert.equal(spec.authentication.type, 'scram-sha-512');
  assert.equal(spec.authorization.type, 'simple');
  const strimziType = { Topic: 'topic', Group: 'group', TransactionalId: 'transactionalId' };
  const strimziPattern = { literal: 'literal', prefixed: 'prefix' };
  const documented = documentedAcls(
    readFileSync(join(repoRoot, 'docs/kafka-security.md'), 'utf8'),
    defaults,
  )
    .map(
      (row) =>
        `${strimziType[row.resource]}/${strimziPattern[row.pattern]}/${row.name}/${row.operation}`,
    )
    .sort();
  const granted = spec.authorization.acls
    .flatMap((acl) => {
      assert.equal(acl.host, '*');
      const { type, patternType, name } = acl.resource;
      return acl.operations.map((operation) => `${type}/${patternType}/${name}/${operation}`);
    })
    .sort();
  assert.deepEqual(granted, documented);
});

test('no kustomize build renders a Strimzi resource', () => {
  for (const dir of ['deploy/k8s/base', 'deploy/k8s/overlays/production']) {
    const kinds = kustomizeBuild(dir).map((object) => object.kind);
    assert.ok(!kinds.includes('KafkaUser'), `${dir} renders no KafkaUser`);
  }
});
