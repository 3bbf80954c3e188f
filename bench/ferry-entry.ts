/**
 * How the benchmark starts ferry: by default as the container does (compiled dist/main.js
 * with the flags of package.json's `start:dist`), or from the TypeScript sources with
 * FERRY_BENCH_FROM=src (as `npm start` and the tests do). Both command lines come from
 * package.json, and the compiled run gets the image's environment (the runtime stage's
 * ENV in deploy/Dockerfile: the allocator's arena count is one of them), so the benchmark
 * measures exactly what production or development runs.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseDockerfile, stageEnv } from '../tools/deploy/dockerfile.ts';

export type FerryEntryKind = 'dist' | 'src';

/** The kind FERRY_BENCH_FROM asks for; dist unless it says src. @throws Error on another value. */
export function ferryEntryKind(raw: string | undefined): FerryEntryKind {
  const value = (raw ?? '').trim() || 'dist';
  if (value !== 'dist' && value !== 'src') {
    throw new Error(`FERRY_BENCH_FROM must be dist or src, got "${raw}"`);
  }
  return value;
}

/**
 * Node flags and script of ferry from package.json (`start:dist` or `start`), without `node`.
 * @throws Error when the compiled entry is missing (run `npm run build`).
 */
export function ferryEntryArgs(root: string, kind: FerryEntryKind): string[] {
  const scripts = (
    JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
      scripts: Record<string, string>;
    }
  ).scripts;
  const script = scripts[kind === 'dist' ? 'start:dist' : 'start'] ?? '';
  const [node, ...args] = script.split(/\s+/);
  const entry = args.at(-1) ?? '';
  if (node !== 'node' || !/\.(js|ts)$/.test(entry)) {
    throw new Error(`package.json's start script is not "node [flags] <entry>": ${script}`);
  }
  if (!existsSync(join(root, entry))) {
    throw new Error(`${entry} is missing: run \`npm run build\` first (or FERRY_BENCH_FROM=src)`);
  }
  return args;
}

/** The environment ferry runs with: the image's (deploy/Dockerfile's runtime ENV) for dist, none for src. */
export function ferryEntryEnv(root: string, kind: FerryEntryKind): Record<string, string> {
  if (kind === 'src') return {};
  const stages = parseDockerfile(readFileSync(join(root, 'deploy/Dockerfile'), 'utf8'));
  return stageEnv(stages.at(-1));
}
