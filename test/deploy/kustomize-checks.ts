/**
 * What the deploy tests check in a rendering: what every ferry deployment on Kubernetes
 * needs, and what each kustomize component adds.
 */
import assert from 'node:assert/strict';
import { variables } from '../../src/config/config.ts';
import { type Labels, matches, type PodSpec, type Rendered } from './kustomize-render.ts';

/** `<NAME>_FILE` of a secret variable: the path of a mounted file holding the secret. */
function isSecretFileVariable(key: string): boolean {
  const name = key.replace(/_FILE$/, '');
  const variable = (variables as Record<string, { secret?: boolean }>)[name];
  return key.endsWith('_FILE') && variable?.secret === true;
}

/** The checks both overlays must pass: what every ferry deployment on Kubernetes needs. */
export function checkCommon(dir: string, rendered: Rendered): void {
  const deployment = rendered.one('Deployment', 'ferry');
  const spec = deployment.spec as {
    selector: { matchLabels: Labels };
    replicas?: number;
    template: { metadata: { labels: Labels }; spec: PodSpec };
  };
  const podLabels = spec.template.metadata.labels;
  const pod = spec.template.spec;
  assert.ok(matches(spec.selector.matchLabels, podLabels), `${dir}: selector matches the pods`);
  const autoscaled =
    rendered.all('ScaledObject').length + rendered.all('HorizontalPodAutoscaler').length;
  if (autoscaled > 0) {
    assert.equal(autoscaled, 1, `${dir}: one autoscaler, never KEDA and an HPA together`);
    assert.equal(spec.replicas, undefined, `${dir}: the autoscaler owns the replica count`);
  } else {
    assert.ok((spec.replicas ?? 1) >= 2, `${dir}: two pods at least, so the PDB lets a node drain`);
  }

  // Spread over zones and nodes; never Pending for want of a zone.
  const spread =
    (
      pod as {
        topologySpreadConstraints?: {
          topologyKey: string;
          whenUnsatisfiable: string;
          labelSelector: { matchLabels: Labels };
        }[];
      }
    ).topologySpreadConstraints ?? [];
  assert.deepEqual(
    spread.map((constraint) => constraint.topologyKey).sort(),
    ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'],
    `${dir}: spread over nodes and zones`,
  );
  for (const constraint of spread) {
    assert.ok(
      matches(constraint.labelSelector.matchLabels, podLabels),
      `${dir}: spread selects the pods`,
    );
    assert.equal(constraint.whenUnsatisfiable, 'ScheduleAnyway');
  }

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
  for (const required of [
    'FERRY_KAFKA_BROKERS',
    'FERRY_SYNC_BASE_URL',
    'FERRY_HTTP_PORT',
    'FERRY_OPS_PORT',
  ]) {
    assert.ok(config[required], `${dir}: ConfigMap sets ${required}`);
  }

  // Ports and probes: a port per audience, the probes never on the public callbacks' one.
  const httpPort = Number(config.FERRY_HTTP_PORT);
  const opsPort = Number(config.FERRY_OPS_PORT);
  const grpcPort = Number(config.FERRY_GRPC_PORT ?? 50051);
  const ports = Object.fromEntries(container.ports.map((port) => [port.name, port.containerPort]));
  assert.deepEqual(ports, { http: httpPort, ops: opsPort, grpc: grpcPort });
  assert.equal(new Set([httpPort, opsPort, grpcPort]).size, 3, `${dir}: three distinct ports`);
  assert.equal(grpcPort, 50051);
  assert.deepEqual(container.livenessProbe?.httpGet, { path: '/healthz', port: 'ops' });
  assert.deepEqual(container.readinessProbe?.httpGet, { path: '/readyz', port: 'ops' });
  assert.deepEqual(container.startupProbe?.httpGet, { path: '/healthz', port: 'ops' });

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
  const opsService = rendered.one('Service', 'ferry-ops');
  const grpcService = rendered.one('Service', 'ferry-grpc');
  for (const [service, portName, port] of [
    [httpService, 'http', httpPort],
    [opsService, 'ops', opsPort],
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

  // PodDisruptionBudget.
  const pdb = rendered.one('PodDisruptionBudget');
  const pdbSpec = pdb.spec as { selector: { matchLabels: Labels }; maxUnavailable?: number };
  assert.ok(matches(pdbSpec.selector.matchLabels, podLabels), 'the PDB selects the pods');
  assert.equal(pdbSpec.maxUnavailable, 1);

  for (const object of rendered.objects) {
    assert.equal(object.metadata.labels?.['app.kubernetes.io/part-of'], 'ferry', object.kind);
  }
}

/** The generated ConfigMap's data: ferry's configuration in this rendering. */
export function configOf(rendered: Rendered): Labels {
  return (rendered.one('ConfigMap') as unknown as { data: Labels }).data;
}

/**
 * components/monitoring: the ServiceMonitor scrapes /metrics on the ops Service only, under
 * the job name the alerts use.
 */
export function checkMonitoring(dir: string, rendered: Rendered): void {
  const monitor = rendered.one('ServiceMonitor').spec as {
    jobLabel?: string;
    selector: { matchLabels: Labels };
    endpoints: { port: string; path: string }[];
  };
  const opsService = rendered.one('Service', 'ferry-ops');
  assert.ok(matches(monitor.selector.matchLabels, opsService.metadata.labels), dir);
  for (const other of ['ferry', 'ferry-grpc']) {
    const service = rendered.one('Service', other);
    assert.ok(!matches(monitor.selector.matchLabels, service.metadata.labels), `${dir}: ${other}`);
  }
  assert.deepEqual(
    monitor.endpoints.map((e) => [e.port, e.path]),
    [['ops', '/metrics']],
  );
  // The job label: the value of the Service label jobLabel names, else the Service's name.
  const job = monitor.jobLabel
    ? opsService.metadata.labels?.[monitor.jobLabel]
    : opsService.metadata.name;
  assert.equal(job, 'ferry', `${dir}: the alerts select job="ferry"`);
  rendered.one('PrometheusRule');
}

/**
 * components/autoscaling-keda: a Kafka lag trigger on exactly the brokers, group and topic
 * ferry uses, and at most one pod per partition of the commands topic.
 */
export function checkKeda(dir: string, rendered: Rendered): void {
  const config = configOf(rendered);
  const deployment = rendered.one('Deployment', 'ferry');
  const scaled = rendered.one('ScaledObject', 'ferry').spec as {
    scaleTargetRef: { apiVersion: string; kind: string; name: string };
    minReplicaCount: number;
    maxReplicaCount: number;
    triggers: { type: string; metadata: Labels }[];
  };
  assert.deepEqual(scaled.scaleTargetRef, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    name: deployment.metadata.name,
  });
  assert.ok(scaled.minReplicaCount >= 2, `${dir}: two pods at least, so the PDB lets a node drain`);
  assert.equal(
    scaled.maxReplicaCount,
    Number(config.FERRY_TOPIC_PARTITIONS),
    `${dir}: maxReplicaCount is the partition count`,
  );
  assert.equal(scaled.triggers.length, 1);
  const [trigger] = scaled.triggers;
  assert.equal(trigger?.type, 'kafka');
  assert.deepEqual(
    [trigger?.metadata.bootstrapServers, trigger?.metadata.consumerGroup, trigger?.metadata.topic],
    [config.FERRY_KAFKA_BROKERS, config.FERRY_KAFKA_GROUP, config.FERRY_TOPIC_COMMANDS],
    `${dir}: KEDA reads the lag of ferry's own group and topic`,
  );
  assert.ok(Number(trigger?.metadata.lagThreshold) > 0, `${dir}: lagThreshold`);
  assert.equal(trigger?.metadata.allowIdleConsumers, 'false');
}

/** components/autoscaling-hpa: CPU, bounded by the partition count like KEDA. */
export function checkHpa(dir: string, rendered: Rendered): void {
  const hpa = rendered.one('HorizontalPodAutoscaler').spec as {
    scaleTargetRef: { kind: string; name: string };
    minReplicas: number;
    maxReplicas: number;
  };
  assert.deepEqual(
    [hpa.scaleTargetRef.kind, hpa.scaleTargetRef.name],
    ['Deployment', rendered.one('Deployment').metadata.name],
  );
  assert.ok(hpa.minReplicas >= 2, 'two pods at least, so the PDB lets a node drain');
  assert.equal(hpa.maxReplicas, Number(configOf(rendered).FERRY_TOPIC_PARTITIONS), dir);
}
