/**
 * The production overlay's KEDA trigger logs in to Kafka as ferry does: the same
 * mechanism and TLS as ferry.env says, the password and CA from the very Secret items the
 * pods mount, the user name from the same ConfigMap variable. Without it KEDA's Kafka
 * scaler cannot connect to a SASL_SSL listener and never sees a lag.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { configOf } from './kustomize-checks.ts';
import { type PodSpec, type Rendered, render } from './kustomize-render.ts';

const PRODUCTION = 'deploy/k8s/overlays/production';

/** ferry's SASL mechanism as KEDA's Kafka scaler names it. */
const KEDA_SASL: Record<string, string> = {
  PLAIN: 'plaintext',
  'SCRAM-SHA-256': 'scram_sha256',
  'SCRAM-SHA-512': 'scram_sha512',
  OAUTHBEARER: 'oauthbearer',
};

interface Trigger {
  type: string;
  metadata: Record<string, string>;
  authenticationRef?: { name: string; kind?: string };
}

interface TriggerAuthentication {
  secretTargetRef?: { parameter: string; name: string; key: string }[];
  env?: { parameter: string; name: string; containerName?: string }[];
}

interface MountedPod extends PodSpec {
  containers: (PodSpec['containers'][number] & {
    volumeMounts?: { name: string; mountPath: string }[];
  })[];
  volumes?: {
    name: string;
    secret?: { secretName: string; items?: { key: string; path: string }[] };
  }[];
}

/** The Secret and key behind the file `path` in the ferry container. */
function secretItemOf(pod: MountedPod, path: string): { name: string; key: string } {
  const container = pod.containers.find((c) => c.name === 'ferry');
  const mount = container?.volumeMounts?.find((m) => path.startsWith(`${m.mountPath}/`));
  assert.ok(mount, `${path} lies under a mount`);
  const secret = pod.volumes?.find((v) => v.name === mount.name)?.secret;
  assert.ok(secret, `${mount.name} is a Secret volume`);
  const item = secret.items?.find((i) => i.path === path.slice(mount.mountPath.length + 1));
  assert.ok(item, `${secret.secretName} projects ${path}`);
  return { name: secret.secretName, key: item.key };
}

/** Asserts that KEDA's trigger logs in with ferry's own settings. */
function checkKedaLogin(rendered: Rendered): void {
  const config = configOf(rendered);
  const scaled = rendered.one('ScaledObject', 'ferry').spec as { triggers: Trigger[] };
  const [trigger] = scaled.triggers;
  assert.ok(trigger, 'one trigger');
  const protocol = config.FERRY_KAFKA_SECURITY_PROTOCOL ?? 'PLAINTEXT';
  assert.equal(
    trigger.metadata.tls ?? 'disable',
    protocol.endsWith('SSL') ? 'enable' : 'disable',
    `TLS as FERRY_KAFKA_SECURITY_PROTOCOL=${protocol}`,
  );
  if (!protocol.startsWith('SASL_')) return;
  const mechanism = config.FERRY_KAFKA_SASL_MECHANISM ?? '';
  assert.equal(trigger.metadata.sasl, KEDA_SASL[mechanism], `sasl as ${mechanism}`);
  const ref = trigger.authenticationRef;
  assert.ok(ref, 'the trigger names a TriggerAuthentication');
  assert.equal(ref.kind ?? 'TriggerAuthentication', 'TriggerAuthentication');
  const auth = rendered.one('TriggerAuthentication', ref.name);
  assert.equal(
    auth.metadata.namespace,
    rendered.one('ScaledObject', 'ferry').metadata.namespace,
    'in the namespace of the ScaledObject',
  );
  const spec = auth.spec as TriggerAuthentication;
  const pod = (rendered.one('Deployment', 'ferry').spec as { template: { spec: MountedPod } })
    .template.spec;
  const fromSecret = (parameter: string) => {
    const found = spec.secretTargetRef?.find((r) => r.parameter === parameter);
    return found && { name: found.name, key: found.key };
  };
  assert.deepEqual(
    fromSecret('password'),
    secretItemOf(pod, config.FERRY_KAFKA_SASL_PASSWORD_FILE ?? ''),
    'the password ferry reads',
  );
  if (config.FERRY_KAFKA_TLS_CA_FILE) {
    assert.deepEqual(
      fromSecret('ca'),
      secretItemOf(pod, config.FERRY_KAFKA_TLS_CA_FILE),
      'the CA ferry trusts',
    );
  }
  // The user name: the variable ferry reads, resolved by KEDA in the ferry container,
  // whose environment comes from the rendered ConfigMap.
  const username = spec.env?.find((e) => e.parameter === 'username');
  assert.equal(username?.name, 'FERRY_KAFKA_SASL_USERNAME');
  const container = pod.containers.find((c) => c.name === username?.containerName);
  assert.ok(container, `a container ${username?.containerName}`);
  assert.ok(
    container.envFrom?.some(
      (source) => source.configMapRef?.name === rendered.one('ConfigMap').metadata.name,
    ),
    'its environment comes from the ConfigMap',
  );
  assert.ok(config.FERRY_KAFKA_SASL_USERNAME, 'which sets the user name');
}

test('production: KEDA’s Kafka trigger logs in with ferry’s own mechanism, TLS, user, password and CA', () => {
  checkKedaLogin(render(PRODUCTION));
});

test('the check fails when the trigger lost its login or disagrees with ferry.env (it can fail)', () => {
  const rendered = render(PRODUCTION);
  const mutated = (change: (trigger: Trigger, auth: TriggerAuthentication) => void): Rendered => {
    const objects = structuredClone(rendered.objects);
    const scaled = objects.find((o) => o.kind === 'ScaledObject') as unknown as {
      spec: { triggers: Trigger[] };
    };
    const auth = objects.find((o) => o.kind === 'TriggerAuthentication') as unknown as {
      spec: TriggerAuthentication;
    };
    change(scaled.spec.triggers[0] as Trigger, auth.spec);
    return {
      objects,
      all: (kind) => objects.filter((o) => o.kind === kind) as ReturnType<Rendered['all']>,
      one: (kind, name) =>
        objects.find(
          (o) => o.kind === kind && (name === undefined || o.metadata.name === name),
        ) as ReturnType<Rendered['one']>,
    };
  };
  assert.throws(() =>
    checkKedaLogin(
      mutated((trigger) => {
        delete trigger.authenticationRef;
      }),
    ),
  );
  assert.throws(() =>
    checkKedaLogin(
      mutated((trigger) => {
        trigger.metadata.sasl = 'scram_sha256';
      }),
    ),
  );
  assert.throws(() =>
    checkKedaLogin(
      mutated((_, auth) => {
        const password = auth.secretTargetRef?.find((r) => r.parameter === 'password');
        if (password) password.key = 'user.password';
      }),
    ),
  );
});
