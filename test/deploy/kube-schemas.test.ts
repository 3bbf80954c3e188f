/**
 * Every object the kustomizations render passes kubeconform, offline and strict, against
 * Kubernetes' own schemas for the built-in kinds and the CRDs of the Prometheus Operator
 * and KEDA for the custom resources (tools/install-tools.sh puts them in .cache).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  type KubeObject,
  kubeconform,
  kustomizeBuild,
  kustomizeBuildWith,
} from './external-tools.ts';

const BASE = 'deploy/k8s/base';
const COMPONENTS = [
  'deploy/k8s/components/monitoring',
  'deploy/k8s/components/autoscaling-keda',
  'deploy/k8s/components/autoscaling-hpa',
];

/** Every rendering an operator can deploy: the base alone, with each component, production. */
function renderings(): Map<string, KubeObject[]> {
  const all = new Map<string, KubeObject[]>([[BASE, kustomizeBuild(BASE)]]);
  for (const component of COMPONENTS) {
    all.set(`${BASE} + ${component}`, kustomizeBuildWith(BASE, [component]));
  }
  all.set('deploy/k8s/overlays/production', kustomizeBuild('deploy/k8s/overlays/production'));
  return all;
}

test('kubeconform finds every rendered object valid against its schema', () => {
  const kinds = new Set<string>();
  for (const [name, objects] of renderings()) {
    const verdicts = kubeconform(objects);
    assert.equal(verdicts.length, objects.length, `${name}: a verdict per object`);
    for (const verdict of verdicts) {
      assert.equal(
        verdict.status,
        'statusValid',
        `${name}: ${verdict.kind} ${verdict.name}: ${verdict.msg ?? ''}`,
      );
      kinds.add(verdict.kind);
    }
  }
  // The custom resources were checked against their CRDs, not skipped.
  for (const kind of [
    'ServiceMonitor',
    'PrometheusRule',
    'ScaledObject',
    'TriggerAuthentication',
    'Deployment',
  ]) {
    assert.ok(kinds.has(kind), `${kind} validated`);
  }
});

test('kubeconform refuses an unknown field, a wrong type and an unknown kind (it can fail)', () => {
  const objects = kustomizeBuild('deploy/k8s/overlays/production');
  const mutate = (kind: string, change: (object: Record<string, unknown>) => void) =>
    objects.map((object) => {
      if (object.kind !== kind) return object;
      const copy = structuredClone(object) as Record<string, unknown>;
      change(copy);
      return copy as KubeObject;
    });
  const spec = (object: Record<string, unknown>) => object.spec as Record<string, unknown>;
  const verdictOf = (changed: KubeObject[], kind: string) =>
    kubeconform(changed).find((verdict) => verdict.kind === kind);

  // A typo in a Deployment field (built-in schema, strict).
  const typo = verdictOf(
    mutate('Deployment', (d) => {
      spec(d).replica = 3;
    }),
    'Deployment',
  );
  assert.equal(typo?.status, 'statusInvalid', typo?.msg);
  assert.match(typo?.msg ?? '', /replica/);

  // A string where KEDA's CRD wants an integer.
  const wrongType = verdictOf(
    mutate('ScaledObject', (s) => {
      spec(s).maxReplicaCount = '12';
    }),
    'ScaledObject',
  );
  assert.equal(wrongType?.status, 'statusInvalid', wrongType?.msg);
  assert.match(wrongType?.msg ?? '', /maxReplicaCount/);

  // A field the Prometheus Operator's CRD does not have.
  const unknown = verdictOf(
    mutate('ServiceMonitor', (m) => {
      spec(m).scrapeEvery = '30s';
    }),
    'ServiceMonitor',
  );
  assert.equal(unknown?.status, 'statusInvalid', unknown?.msg);

  // A misspelt field of KEDA's TriggerAuthentication.
  const misspelt = verdictOf(
    mutate('TriggerAuthentication', (a) => {
      spec(a).secretTargetRefs = spec(a).secretTargetRef;
    }),
    'TriggerAuthentication',
  );
  assert.equal(misspelt?.status, 'statusInvalid', misspelt?.msg);

  // A kind without a schema is an error, never silently skipped.
  const missing = kubeconform([
    { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'x' } },
  ]);
  assert.equal(missing[0]?.status, 'statusError');
});
