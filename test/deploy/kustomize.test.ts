import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { variables } from '../../src/config/config.ts';
import { type KubeObject, kustomizeBuild, parseYamlDocuments, repoRoot } from './external-tools.ts';

type Labels = Record<string, string>;

interface Probe {
  httpGet?: { path: string; port: string | number };
}

interface Container {
  name: string;
  image: string;
  ports: { name: string; containerPort: number }[];
  envFrom?: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
  env?: { name: string }[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { preStop?: { exec?: { command: string[] } } };
  resources?: { requests?: Labels; limits?: Labels };
  securityContext?: {
    runAsNonRoot?: boolean;
    runAsUser?: number;
    allowPrivilegeEscalation?: boolean;
    readOnlyRootFilesystem?: boolean;
    privileged?: boolean;
    capabilities?: { drop?: string[]; add?: string[] };
    seccompProfile?: { type: string };
  };
}

interface PodSpec {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; seccompProfile?: { type: string } };
  containers: Container[];
}

interface Rendered {
  readonly objects: KubeObject[];
  one(kind: string, name?: string): KubeObject & { spec: Record<string, unknown> };
  all(kind: string): (KubeObject & { spec: Record<string, unknown> })[];
}

function render(dir: string): Rendered {
  const objects = kustomizeBuild(dir);
  const all = (kind: string) =>
    objects.filter((object) => object.kind === kind) as (KubeObject & {
      spec: Record<string, unknown>;
    })[];
  return {
    objects,
    all,
    one(kind, name) {
      const found = all(kind).filter(
        (object) => name === undefined || object.metadata.name === name,
      );
      assert.equal(found.length, 1, `${dir}: exactly one ${kind} ${name ?? ''}`);
      return found[0] as KubeObject & { spec: Record<string, unknown> };
    },
  };
}

/** `<NAME>_FILE` of a secret variable: the path of a mounted file holding the secret. */
function isSecretFileVariable(key: string): boolean {
  const name = key.replace(/_FILE$/, '');
  const variable = (variables as Record<string, { secret?: boolean }>)[name];
  return key.endsWith('_FILE') && variable?.secret === true;
}

function matches(selector: Labels, labels: Labels | undefined): boolean {
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}

/** The checks both overlays must pass: what every ferry deployment on Kubernetes needs. */
function checkCommon(dir: string, rendered: Rendered): void {
  const deployment = rendered.one('Deployment', 'ferry');
  const spec = deployment.spec as {
    selector: { matchLabels: Labels };
    replicas?: number;
    template: { metadata: { labels: Labels }; spec: PodSpec };
  };
  const podLabels = spec.template.metadata.labels;
  const pod = spec.template.spec;
  assert.ok(matches(spec.selector.matchLabels, podLabels), `${dir}: selector matches the pods`);
  assert.equal(spec.replicas, undefined, `${dir}: the HPA owns the replica count`);

  // Configuration: the generated ConfigMap and the Secret are what the pods read.
  const configMap = rendered.one('ConfigMap');
  const config = (configMap as unknown as { data: Labels }).data;
  const [container] = pod.containers;
  assert.ok(container);
  const configRefs = (container.envFrom ?? []).flatMap((from) =>
    from.configMapRef ? [from.configMapRef.name] : [],
  );
  const secretRefs = (container.envFrom ?? []).flatMap((from) =>
    from.secretRef ? [from.secretRef.name] : [],
  );
  assert.deepEqual(
    configRefs,
    [configMap.metadata.name],
    `${dir}: envFrom the generated ConfigMap`,
  );
  assert.deepEqual(secretRefs, ['ferry-secrets']);
  for (const key of Object.keys(config)) {
    assert.ok(
      key in variables || isSecretFileVariable(key),
      `${dir}: ${key} is a variable ferry reads (src/config/config.ts)`,
    );
    assert.ok(
      !/API_KEY|TOKEN|PASSWORD/.test(key) || isSecretFileVariable(key),
      `${dir}: no secret in the ConfigMap (${key})`,
    );
  }
  for (const required of ['FERRY_KAFKA_BROKERS', 'FERRY_SYNC_BASE_URL', 'FERRY_HTTP_PORT']) {
    assert.ok(config[required], `${dir}: ConfigMap sets ${required}`);
  }

  // Ports and probes.
  const httpPort = Number(config.FERRY_HTTP_PORT);
  const grpcPort = Number(config.FERRY_GRPC_PORT ?? 50051);
  const ports = Object.fromEntries(container.ports.map((port) => [port.name, port.containerPort]));
  assert.deepEqual(ports, { http: httpPort, grpc: grpcPort });
  assert.equal(grpcPort, 50051);
  assert.deepEqual(container.livenessProbe?.httpGet, { path: '/healthz', port: 'http' });
  assert.deepEqual(container.readinessProbe?.httpGet, { path: '/readyz', port: 'http' });
  assert.deepEqual(container.startupProbe?.httpGet, { path: '/healthz', port: 'http' });

  // Resources.
  for (const kind of ['requests', 'limits'] as const) {
    for (const resource of ['cpu', 'memory']) {
      assert.ok(container.resources?.[kind]?.[resource], `${dir}: ${kind}.${resource}`);
    }
  }

  // securityContext: non-root, read-only root, no escalation, no capabilities, seccomp.
  assert.equal(pod.securityContext?.runAsNonRoot, true);
  assert.equal(pod.securityContext?.seccompProfile?.type, 'RuntimeDefault');
  assert.equal(pod.automountServiceAccountToken, false);
  const security = container.securityContext;
  assert.equal(security?.runAsNonRoot, true);
  assert.ok((security?.runAsUser ?? 0) > 0);
  assert.equal(security?.allowPrivilegeEscalation, false);
  assert.equal(security?.readOnlyRootFilesystem, true);
  assert.equal(security?.privileged, false);
  assert.deepEqual(security?.capabilities, { drop: ['ALL'] });
  assert.equal(security?.seccompProfile?.type, 'RuntimeDefault');

  // Graceful termination longer than ferry's drain (FERRY_SHUTDOWN_GRACE_MS) plus preStop.
  const graceMs = Number(config.FERRY_SHUTDOWN_GRACE_MS);
  assert.ok(graceMs > 0);
  const preStop = container.lifecycle?.preStop?.exec?.command ?? [];
  const preStopMs = preStop[0] === 'sleep' ? Number(preStop[1]) * 1000 : 0;
  assert.ok(
    (pod.terminationGracePeriodSeconds ?? 30) * 1000 >= graceMs + preStopMs + 10_000,
    `${dir}: terminationGracePeriodSeconds leaves 10 s beyond preStop + drain`,
  );
  assert.equal(pod.serviceAccountName, rendered.one('ServiceAccount').metadata.name);

  // Services select the pods and name their ports after the container's.
  const httpService = rendered.one('Service', 'ferry');
  const grpcService = rendered.one('Service', 'ferry-grpc');
  for (const [service, portName, port] of [
    [httpService, 'http', httpPort],
    [grpcService, 'grpc', grpcPort],
  ] as const) {
    const serviceSpec = service.spec as {
      selector: Labels;
      ports: { name: string; port: number; targetPort: string }[];
    };
    assert.ok(
      matches(serviceSpec.selector, podLabels),
      `${service.metadata.name} selects the pods`,
    );
    assert.deepEqual(
      serviceSpec.ports.map((p) => [p.name, p.port, p.targetPort]),
      [[portName, port, portName]],
    );
  }

  // PodDisruptionBudget, HPA bounded by partitions.
  const pdb = rendered.one('PodDisruptionBudget');
  const pdbSpec = pdb.spec as { selector: { matchLabels: Labels }; maxUnavailable?: number };
  assert.ok(matches(pdbSpec.selector.matchLabels, podLabels), 'the PDB selects the pods');
  assert.equal(pdbSpec.maxUnavailable, 1);
  const hpa = rendered.one('HorizontalPodAutoscaler').spec as {
    scaleTargetRef: { kind: string; name: string };
    minReplicas: number;
    maxReplicas: number;
  };
  assert.deepEqual(
    [hpa.scaleTargetRef.kind, hpa.scaleTargetRef.name],
    ['Deployment', deployment.metadata.name],
  );
  assert.ok(hpa.minReplicas >= 2, 'two pods at least, so the PDB lets a node drain');
  assert.ok(
    hpa.maxReplicas <= Number(config.FERRY_TOPIC_PARTITIONS),
    `${dir}: maxReplicas ${hpa.maxReplicas} <= partitions ${config.FERRY_TOPIC_PARTITIONS}`,
  );

  // Monitoring: the ServiceMonitor scrapes /metrics on the http Service's http port.
  const monitor = rendered.one('ServiceMonitor').spec as {
    selector: { matchLabels: Labels };
    endpoints: { port: string; path: string }[];
  };
  assert.ok(matches(monitor.selector.matchLabels, httpService.metadata.labels));
  assert.ok(!matches(monitor.selector.matchLabels, grpcService.metadata.labels));
  assert.deepEqual(
    monitor.endpoints.map((e) => [e.port, e.path]),
    [['http', '/metrics']],
  );
  rendered.one('PrometheusRule');

  for (const object of rendered.objects) {
    assert.equal(object.metadata.labels?.['app.kubernetes.io/part-of'], 'ferry', object.kind);
  }
}

test('the base renders and passes the checks', () => {
  const rendered = render('deploy/k8s/base');
  checkCommon('base', rendered);
  const container = (rendered.one('Deployment').spec as { template: { spec: PodSpec } }).template
    .spec.containers[0];
  assert.equal(container?.image, 'ferry:latest');
});

test('the production overlay renders and passes the checks', () => {
  const rendered = render('deploy/k8s/overlays/production');
  checkCommon('production', rendered);
  for (const object of rendered.objects) {
    if (object.kind === 'Namespace') continue;
    assert.equal(object.metadata.namespace, 'ferry', `${object.kind} ${object.metadata.name}`);
  }
  const namespace = rendered.one('Namespace', 'ferry');
  assert.equal(namespace.metadata.labels?.['pod-security.kubernetes.io/enforce'], 'restricted');
  const pod = (rendered.one('Deployment').spec as { template: { spec: PodSpec } }).template.spec;
  assert.match(pod.containers[0]?.image ?? '', /^[\w.-]+(\/[\w.-]+)+:\d+\.\d+\.\d+$/);
  assert.ok(
    (pod as unknown as { topologySpreadConstraints?: unknown[] }).topologySpreadConstraints?.length,
  );
  for (const kind of ['ServiceMonitor', 'PrometheusRule']) {
    assert.ok(rendered.one(kind).metadata.labels?.release, `${kind} has the release label`);
  }
  // Only the callback route is public.
  const ingress = rendered.one('Ingress').spec as {
    rules: { http: { paths: { path: string; backend: { service: { name: string } } }[] } }[];
  };
  const paths = ingress.rules.flatMap((rule) => rule.http.paths);
  assert.deepEqual(
    paths.map((p) => [p.path, p.backend.service.name]),
    [['/callbacks/', 'ferry']],
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
  for (const dir of ['deploy/k8s/base', 'deploy/k8s/overlays/production']) {
    assert.equal(render(dir).all('Secret').length, 0, `${dir} renders no Secret`);
  }
});
