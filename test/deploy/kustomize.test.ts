import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { variables } from '../../src/config/config.ts';
import { type KubeObject, parseYamlDocuments, repoRoot } from './external-tools.ts';
import { checkCommon, checkHpa, checkKeda, checkMonitoring, configOf } from './kustomize-checks.ts';
import { type Labels, type PodSpec, render } from './kustomize-render.ts';

const BASE = 'deploy/k8s/base';
const PRODUCTION = 'deploy/k8s/overlays/production';
const MONITORING = 'deploy/k8s/components/monitoring';
const KEDA = 'deploy/k8s/components/autoscaling-keda';
const HPA = 'deploy/k8s/components/autoscaling-hpa';

/** The API groups a plain cluster serves without any operator: what the base may use. */
const BUILT_IN_API_VERSIONS = new Set(['v1', 'apps/v1', 'policy/v1', 'autoscaling/v2']);

test('the base renders only built-in kinds, so it applies to a plain cluster', () => {
  const rendered = render(BASE);
  checkCommon('base', rendered);
  for (const object of rendered.objects) {
    assert.ok(
      BUILT_IN_API_VERSIONS.has(object.apiVersion),
      `base: ${object.kind} ${object.apiVersion} needs an operator: move it to a component`,
    );
  }
  assert.deepEqual(rendered.all('HorizontalPodAutoscaler'), [], 'autoscaling is opt-in');
  const container = (rendered.one('Deployment').spec as { template: { spec: PodSpec } }).template
    .spec.containers[0];
  assert.equal(container?.image, 'ferry:latest');
});

test('each component renders on top of the base', () => {
  const monitoring = render(BASE, [MONITORING]);
  checkCommon('base+monitoring', monitoring);
  checkMonitoring('base+monitoring', monitoring);

  const keda = render(BASE, [KEDA]);
  checkCommon('base+autoscaling-keda', keda);
  checkKeda('base+autoscaling-keda', keda);

  const hpa = render(BASE, [HPA]);
  checkCommon('base+autoscaling-hpa', hpa);
  checkHpa('base+autoscaling-hpa', hpa);
});

test('the replica maximum follows FERRY_TOPIC_PARTITIONS, changed in one place', () => {
  // An overlay that only changes the partition count (and the Kafka address and group).
  const overlay = [
    'configMapGenerator:',
    '  - name: ferry-config',
    '    behavior: merge',
    '    literals:',
    '      - FERRY_TOPIC_PARTITIONS=9',
    '      - FERRY_KAFKA_BROKERS=b-1.example:9093,b-2.example:9093',
    '      - FERRY_KAFKA_GROUP=ferry-blue',
  ].join('\n');
  const keda = render(BASE, [KEDA], overlay);
  checkKeda('partitions=9 with KEDA', keda);
  assert.equal((keda.one('ScaledObject').spec as { maxReplicaCount: number }).maxReplicaCount, 9);
  const hpa = render(BASE, [HPA], overlay);
  assert.equal((hpa.one('HorizontalPodAutoscaler').spec as { maxReplicas: number }).maxReplicas, 9);
});

test('the production overlay renders and passes the checks', () => {
  const rendered = render(PRODUCTION);
  checkCommon('production', rendered);
  checkMonitoring('production', rendered);
  checkKeda('production', rendered);
  assert.equal(configOf(rendered).FERRY_TOPIC_PARTITIONS, '12');
  const scaled = rendered.one('ScaledObject').spec as { minReplicaCount: number };
  assert.equal(scaled.minReplicaCount, 3, 'production: one pod per zone at least');
  for (const object of rendered.objects) {
    if (object.kind === 'Namespace') continue;
    assert.equal(object.metadata.namespace, 'ferry', `${object.kind} ${object.metadata.name}`);
  }
  const namespace = rendered.one('Namespace', 'ferry');
  assert.equal(namespace.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
  const pod = (rendered.one('Deployment').spec as { template: { spec: PodSpec } }).template.spec;
  assert.match(pod.containers[0]?.image ?? '', /^[\w.-]+(\/[\w.-]+)+:\d+\.\d+\.\d+$/);
  for (const kind of ['ServiceMonitor', 'PrometheusRule']) {
    assert.ok(rendered.one(kind).metadata.labels?.release, `${kind} has the release label`);
  }
  // Only the callback route is public, on the port that carries nothing else.
  const ingress = rendered.one('Ingress').spec as {
    rules: {
      http: {
        paths: { path: string; backend: { service: { name: string; port: { name: string } } } }[];
      };
    }[];
  };
  const paths = ingress.rules.flatMap((rule) => rule.http.paths);
  assert.deepEqual(
    paths.map((p) => [p.path, p.backend.service.name, p.backend.service.port.name]),
    [['/callbacks/', 'ferry', 'http']],
  );
});

test('the production overlay connects over SASL_SSL with SCRAM, every *_FILE inside a mounted Secret', () => {
  const rendered = render('deploy/k8s/overlays/production');
  const config = (rendered.one('ConfigMap') as unknown as { data: Labels }).data;
  assert.equal(config.FERRY_KAFKA_SECURITY_PROTOCOL, 'SASL_SSL');
  assert.equal(config.FERRY_KAFKA_SASL_MECHANISM, 'SCRAM-SHA-512');
  assert.ok(config.FERRY_KAFKA_SASL_USERNAME);
  assert.equal(config.FERRY_KAFKA_SASL_PASSWORD, undefined, 'the password is no plain variable');
  assert.ok(config.FERRY_KAFKA_SASL_PASSWORD_FILE, 'the password comes from a file');
  assert.ok(config.FERRY_KAFKA_TLS_CA_FILE, 'the cluster CA comes from a file');
  const pod = (rendered.one('Deployment').spec as { template: { spec: Record<string, unknown> } })
    .template.spec as {
    containers: { volumeMounts?: { name: string; mountPath: string; readOnly?: boolean }[] }[];
    volumes?: {
      name: string;
      secret?: { secretName: string; items?: { key: string; path: string }[] };
    }[];
  };
  const mounts = pod.containers[0]?.volumeMounts ?? [];
  const fileKeys = Object.keys(config).filter((key) => key.endsWith('_FILE'));
  assert.ok(fileKeys.length >= 2);
  for (const key of fileKeys) {
    const path = config[key] ?? '';
    const mount = mounts.find((m) => path.startsWith(`${m.mountPath}/`));
    assert.ok(mount, `${key}=${path} lies under a volume mount`);
    assert.equal(mount.readOnly, true, `${mount.mountPath} is mounted read-only`);
    const volume = pod.volumes?.find((v) => v.name === mount.name);
    assert.ok(volume?.secret, `${key}: the volume ${mount.name} is a Secret`);
    const file = path.slice(mount.mountPath.length + 1);
    const items = volume.secret.items ?? [];
    assert.ok(
      items.some((item) => item.path === file),
      `${key}: the Secret ${volume.secret.secretName} projects ${file}`,
    );
  }
  // The /tmp emptyDir of the base survives the patch.
  assert.ok(mounts.some((m) => m.mountPath === '/tmp'));
});

test('the Secret template holds the three secrets and nothing renders it', () => {
  const [secret] = parseYamlDocuments(
    readFileSync(join(repoRoot, 'deploy/k8s/secret.template.yaml'), 'utf8'),
  ) as [KubeObject & { stringData: Labels }];
  assert.equal(secret.metadata.name, 'ferry-secrets');
  assert.deepEqual(Object.keys(secret.stringData).sort(), [
    'FERRY_ADMIN_TOKEN',
    'FERRY_API_KEY',
    'FERRY_CALLBACK_TOKEN',
  ]);
  for (const key of Object.keys(secret.stringData)) assert.ok(key in variables, key);
  for (const dir of [BASE, PRODUCTION]) {
    assert.equal(render(dir).all('Secret').length, 0, `${dir} renders no Secret`);
  }
});
