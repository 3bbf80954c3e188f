/**
 * Static checks of deploy/Dockerfile. No Docker engine runs where the tests run, so
 * the image is not built here; these checks hold its properties: multi-stage,
 * production dependencies only, non-root, SIGTERM straight to node.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { repoRoot } from './external-tools.ts';

interface Instruction {
  readonly keyword: string;
  readonly args: string;
}

/** Instructions per stage, continuation lines joined and comments dropped. */
function parseDockerfile(text: string): { name: string; from: string; body: Instruction[] }[] {
  const logical = text
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !line.startsWith('#'));
  const args = new Map<string, string>();
  const stages: { name: string; from: string; body: Instruction[] }[] = [];
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const argText = rest.join(' ');
    if (keyword === 'ARG' && stages.length === 0) {
      const [name, value = ''] = argText.split('=');
      if (name) args.set(name, value);
    } else if (keyword === 'FROM') {
      const [image = '', , name = ''] = argText.split(/\s+/);
      const from = image.replace(/\$\{(\w+)\}/g, (_m, arg: string) => args.get(arg) ?? '');
      stages.push({ name, from, body: [] });
    } else {
      stages.at(-1)?.body.push({ keyword: keyword.toUpperCase(), args: argText });
    }
  }
  return stages;
}

const stages = parseDockerfile(readFileSync(join(repoRoot, 'deploy/Dockerfile'), 'utf8'));
const runtime = stages.at(-1);

test('the image is multi-stage on node:24-slim and the last stage is the runtime', () => {
  assert.ok(stages.length >= 2);
  for (const stage of stages) assert.equal(stage.from, 'node:24-slim', stage.name);
  assert.equal(runtime?.name, 'runtime');
});

test('the runtime holds production dependencies, sources and protos only', () => {
  const deps = stages.find((stage) => stage.name === 'deps');
  assert.ok(deps?.body.some((i) => i.keyword === 'RUN' && /npm ci --omit=dev/.test(i.args)));
  const copies = runtime?.body.filter((i) => i.keyword === 'COPY').map((i) => i.args) ?? [];
  assert.deepEqual(copies, [
    '--from=deps /app/node_modules ./node_modules',
    'package.json package-lock.json ./',
    'proto ./proto',
    'src ./src',
  ]);
  assert.ok(
    !runtime?.body.some(
      (i) => i.keyword === 'RUN' && /npm (ci|install)(?!.*--omit=dev)/.test(i.args),
    ),
  );
});

test('the process runs as a numeric non-root user and receives SIGTERM directly', () => {
  const user = runtime?.body.filter((i) => i.keyword === 'USER').at(-1)?.args ?? '';
  assert.match(user, /^[1-9]\d*:[1-9]\d*$/, 'numeric uid:gid so runAsNonRoot can verify it');
  const entrypoint = runtime?.body.find((i) => i.keyword === 'ENTRYPOINT')?.args ?? '';
  const argv = JSON.parse(entrypoint) as string[];
  assert.deepEqual(argv, [
    'node',
    '--disable-warning=TimeoutNegativeWarning',
    '--max-semi-space-size=8',
    'src/main.ts',
  ]);
  const start = (
    JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      scripts: { start: string };
    }
  ).scripts.start;
  assert.equal(argv.join(' '), start, 'the entry is `npm start` without npm');
  assert.ok(!runtime?.body.some((i) => i.keyword === 'CMD'));
  assert.equal(runtime?.body.find((i) => i.keyword === 'STOPSIGNAL')?.args, 'SIGTERM');
  assert.match(runtime?.body.find((i) => i.keyword === 'EXPOSE')?.args ?? '', /^8080 50051$/);
});
