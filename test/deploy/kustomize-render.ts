/** Rendering a kustomization for the deploy tests, and the shapes of what they read in it. */
import assert from 'node:assert/strict';
import { type KubeObject, kustomizeBuild, kustomizeBuildWith } from './external-tools.ts';

export type Labels = Record<string, string>;

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

export interface PodSpec {
  serviceAccountName?: string;
  automountServiceAccountToken?: boolean;
  terminationGracePeriodSeconds?: number;
  securityContext?: { runAsNonRoot?: boolean; seccompProfile?: { type: string } };
  containers: Container[];
}

export interface Rendered {
  readonly objects: KubeObject[];
  one(kind: string, name?: string): KubeObject & { spec: Record<string, unknown> };
  all(kind: string): (KubeObject & { spec: Record<string, unknown> })[];
}

/** Renders `dir`, with `components` and `extra` kustomization lines when given. */
export function render(dir: string, components: readonly string[] = [], extra = ''): Rendered {
  const objects =
    components.length === 0 && extra === ''
      ? kustomizeBuild(dir)
      : kustomizeBuildWith(dir, components, extra);
  return wrap(dir, objects);
}

/** `one` and `all` over rendered objects; `one` asserts there is exactly one. */
function wrap(dir: string, objects: KubeObject[]): Rendered {
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

/** Whether `labels` carry every label of `selector`. */
export function matches(selector: Labels, labels: Labels | undefined): boolean {
  return Object.entries(selector).every(([key, value]) => labels?.[key] === value);
}
