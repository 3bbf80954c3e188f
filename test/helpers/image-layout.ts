/**
 * The container image without a container engine: deploy/Dockerfile's runtime stage laid
 * out in a temporary folder (each COPY of it, the build stage's compiler run into the
 * folder its dist/ copy names), and the ENTRYPOINT and environment to start it with.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdtempSync, readFileSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseDockerfile, stageEnv } from '../../tools/deploy/dockerfile.ts';
import { repoRoot } from '../deploy/external-tools.ts';

export const dockerStages = parseDockerfile(
  readFileSync(join(repoRoot, 'deploy/Dockerfile'), 'utf8'),
);
export const runtimeStage = dockerStages.at(-1);
const workdir = runtimeStage?.body.find((i) => i.keyword === 'WORKDIR')?.args ?? '';
/** The runtime stage's ENTRYPOINT, `node` first. */
export const entrypoint = JSON.parse(
  runtimeStage?.body.find((i) => i.keyword === 'ENTRYPOINT')?.args ?? '[]',
) as string[];
export const outDir = (
  JSON.parse(readFileSync(join(repoRoot, 'tsconfig.build.json'), 'utf8')) as {
    compilerOptions: { outDir: string };
  }
).compilerOptions.outDir;

/** The environment the image sets (its ENV lines). */
export function imageEnv(): Record<string, string> {
  return stageEnv(runtimeStage);
}

/** The runtime stage's files in a fresh folder, compiled code included; the caller removes it. */
export function imageLayout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-image-'));
  for (const copy of runtimeStage?.body.filter((i) => i.keyword === 'COPY') ?? []) {
    const words = copy.args.split(/\s+/);
    const from = words[0]?.startsWith('--from=') ? words.shift()?.slice('--from='.length) : '';
    const dest = join(dir, words.pop() ?? '');
    if (from === 'deps') {
      assert.deepEqual(words, [`${workdir}/node_modules`]);
      symlinkSync(join(repoRoot, 'node_modules'), dest);
    } else if (from === 'build') {
      assert.deepEqual(words, [`${workdir}/${outDir}`], 'the build stage output is what is copied');
      const compiled = spawnSync(
        process.execPath,
        [
          join(repoRoot, 'node_modules/typescript/bin/tsc'),
          '-p',
          'tsconfig.build.json',
          '--outDir',
          dest,
        ],
        { cwd: repoRoot, encoding: 'utf8' },
      );
      assert.equal(compiled.status, 0, compiled.stdout + compiled.stderr);
    } else {
      assert.equal(from, '', `a COPY from an unknown stage: ${copy.args}`);
      for (const source of words) {
        cpSync(join(repoRoot, source), words.length > 1 ? join(dest, source) : dest, {
          recursive: true,
        });
      }
    }
  }
  return dir;
}
