/**
 * The real tools the deploy and observability tests run (promtool, prometheus,
 * kustomize, python3 with PyYAML), found on PATH or in the git-ignored .cache/bin
 * where tools/install-tools.sh puts them. A missing tool fails the test with the
 * command that installs it: these tests never skip.
 */
import { spawnSync } from 'node:child_process';
import { accessSync, constants, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, relative, resolve } from 'node:path';

/** The repository root. */
export const repoRoot = resolve(import.meta.dirname, '..', '..');

const INSTALL_HINT = 'run tools/install-tools.sh (make test runs it)';

/**
 * The absolute path of an executable on PATH or in .cache/bin.
 *
 * @throws Error naming the tool and how to install it when it is missing.
 */
export function findTool(name: string): string {
  const dirs = [...(process.env.PATH ?? '').split(delimiter), join(repoRoot, '.cache', 'bin')];
  for (const dir of dirs) {
    if (dir.length === 0) continue;
    const candidate = join(dir, name);
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not here; keep looking
    }
  }
  throw new Error(`${name} not found on PATH or in .cache/bin: ${INSTALL_HINT}`);
}

/** What a finished command printed. */
export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** How to run a command: folder, standard input, time bound, variables added to ours. */
export interface RunOptions {
  readonly cwd?: string;
  readonly input?: string;
  readonly timeoutMs?: number;
  readonly env?: Readonly<Record<string, string>>;
}

/** Runs a command to completion (bounded by `timeoutMs`, default 60 s). */
export function run(command: string, args: readonly string[], options: RunOptions = {}): RunResult {
  const result = spawnSync(command, args, {
    cwd: options.cwd ?? repoRoot,
    input: options.input,
    env: options.env ? { ...process.env, ...options.env } : process.env,
    encoding: 'utf8',
    timeout: options.timeoutMs ?? 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (result.error) throw result.error;
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}

/**
 * Runs a command and returns its stdout.
 *
 * @throws Error with the command's output when it exits non-zero.
 */
export function runOk(command: string, args: readonly string[], options: RunOptions = {}): string {
  const result = run(command, args, options);
  if (result.status !== 0) {
    throw new Error(
      `${command} ${args.join(' ')} exited with ${result.status}\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

const YAML_TO_JSON = `
import json, sys, yaml
json.dump([d for d in yaml.safe_load_all(sys.stdin) if d is not None], sys.stdout)
`;

/**
 * Parses a YAML stream (one or more documents) with PyYAML's safe loader.
 *
 * @throws Error when python3/PyYAML is missing or the text is not YAML.
 */
export function parseYamlDocuments(text: string): unknown[] {
  let python: string;
  try {
    python = findTool('python3');
  } catch {
    throw new Error(`python3 with PyYAML is needed to read YAML: ${INSTALL_HINT}`);
  }
  const result = run(python, ['-c', YAML_TO_JSON], { input: text });
  if (result.status !== 0) {
    const missing = result.stderr.includes("No module named 'yaml'");
    throw new Error(
      missing ? `PyYAML is missing: ${INSTALL_HINT}` : `YAML parse failed: ${result.stderr}`,
    );
  }
  return JSON.parse(result.stdout) as unknown[];
}

/** Renders a kustomization directory (relative to the repository) into its objects. */
export function kustomizeBuild(dir: string): KubeObject[] {
  const [command = 'kustomize', ...args] = kustomizeCommand();
  const text = runOk(command, [...args, join(repoRoot, dir)]);
  return parseYamlDocuments(text) as KubeObject[];
}

/**
 * Renders `base` (a directory relative to the repository) with kustomize `components`
 * added, through a throw-away kustomization that lists them, as an overlay would.
 * `extra` is appended to that kustomization (e.g. a configMapGenerator merge).
 */
export function kustomizeBuildWith(
  base: string,
  components: readonly string[],
  extra = '',
): KubeObject[] {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-kustomize-'));
  try {
    // kustomize refuses absolute paths: refer to the repository relatively.
    const from = (path: string) => relative(dir, realpathSync(join(repoRoot, path)));
    const lines = [
      'apiVersion: kustomize.config.k8s.io/v1beta1',
      'kind: Kustomization',
      'resources:',
      `  - ${from(base)}`,
      ...(components.length > 0 ? ['components:'] : []),
      ...components.map((component) => `  - ${from(component)}`),
      extra,
    ];
    writeFileSync(join(dir, 'kustomization.yaml'), `${lines.join('\n')}\n`);
    const [command = 'kustomize', ...args] = kustomizeCommand();
    return parseYamlDocuments(runOk(command, [...args, dir])) as KubeObject[];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The Kubernetes version the manifests are validated against (tools/install-tools.sh). */
export const KUBE_SCHEMA_VERSION = '1.34.0';

/** One object's verdict from kubeconform (`-output json`). */
export interface SchemaVerdict {
  readonly kind: string;
  readonly name: string;
  readonly version: string;
  /** `statusValid`, `statusInvalid`, `statusError` or `statusSkipped`. */
  readonly status: string;
  readonly msg?: string;
}

/**
 * Validates a YAML stream with kubeconform, offline and strict (an unknown field fails),
 * against the schemas tools/install-tools.sh put in .cache/kube-schemas: Kubernetes'
 * built-in kinds, and the CRDs of the Prometheus Operator and KEDA. An object whose
 * schema is missing is an error, never skipped.
 */
export function kubeconform(objects: readonly KubeObject[]): SchemaVerdict[] {
  // JSON is YAML: one document per object.
  const yaml = objects.map((object) => JSON.stringify(object)).join('\n---\n');
  const schemas = join(repoRoot, '.cache', 'kube-schemas');
  try {
    accessSync(join(schemas, '.stamp'));
  } catch {
    throw new Error(`Kubernetes schemas missing in ${schemas}: ${INSTALL_HINT}`);
  }
  const result = run(
    findTool('kubeconform'),
    [
      '-strict',
      '-summary',
      '-verbose',
      '-output',
      'json',
      '-kubernetes-version',
      KUBE_SCHEMA_VERSION,
      '-schema-location',
      `${schemas}/core/{{ .NormalizedKubernetesVersion }}-standalone{{ .StrictSuffix }}/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
      '-schema-location',
      `${schemas}/crd/{{ .ResourceKind }}{{ .KindSuffix }}.json`,
      '-',
    ],
    { input: yaml },
  );
  const report = JSON.parse(result.stdout) as { resources?: SchemaVerdict[] };
  return report.resources ?? [];
}

/**
 * `kustomize build` (v5, from PATH or .cache/bin), else `kubectl kustomize` when its
 * embedded kustomize is v5.
 *
 * @throws Error when neither is available.
 */
export function kustomizeCommand(): string[] {
  try {
    return [findTool('kustomize'), 'build'];
  } catch (missing: unknown) {
    try {
      const kubectl = findTool('kubectl');
      const version = run(kubectl, ['version', '--client']).stdout;
      if (/Kustomize Version: v5\./.test(version)) return [kubectl, 'kustomize'];
    } catch {
      // fall through to the error about kustomize
    }
    throw missing;
  }
}

/** The fields of a Kubernetes object the tests read. */
export interface KubeObject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: {
    readonly name: string;
    readonly namespace?: string;
    readonly labels?: Record<string, string>;
  };
  readonly [field: string]: unknown;
}
