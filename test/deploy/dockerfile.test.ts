/**
 * Static checks of deploy/Dockerfile. No Docker engine runs where the tests run, so
 * the image is not built here; these checks hold its properties: multi-stage,
 * production dependencies only, non-root, SIGTERM straight to node.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { variables } from '../../src/config/config.ts';
import { parseDockerfile, stageEnv } from '../../tools/deploy/dockerfile.ts';
import { repoRoot } from './external-tools.ts';

const stages = parseDockerfile(readFileSync(join(repoRoot, 'deploy/Dockerfile'), 'utf8'));
const runtime = stages.at(-1);

test('the image is multi-stage on node:24-slim and the last stage is the runtime', () => {
  assert.ok(stages.length >= 2);
  for (const stage of stages) assert.equal(stage.from, 'node:24-slim', stage.name);
  assert.equal(runtime?.name, 'runtime');
});

test('the runtime holds production dependencies, compiled code and protos only', () => {
  const deps = stages.find((stage) => stage.name === 'deps');
  assert.ok(deps?.body.some((i) => i.keyword === 'RUN' && /npm ci --omit=dev/.test(i.args)));
  const copies = runtime?.body.filter((i) => i.keyword === 'COPY').map((i) => i.args) ?? [];
  assert.deepEqual(copies, [
    '--from=deps /app/node_modules ./node_modules',
    'package.json package-lock.json ./',
    'proto ./proto',
    '--from=build /app/dist ./dist',
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
    '--max-semi-space-size=4',
    '--max-old-space-size=80',
    '--v8-pool-size=1',
    'dist/main.js',
  ]);
  const start = (
    JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
      scripts: { 'start:dist': string };
    }
  ).scripts['start:dist'];
  assert.equal(argv.join(' '), start, 'the entry is `npm run start:dist` without npm');
  assert.ok(!runtime?.body.some((i) => i.keyword === 'CMD'));
  assert.equal(runtime?.body.find((i) => i.keyword === 'STOPSIGNAL')?.args, 'SIGTERM');
  // The default ports of the callbacks, the operations routes and the admin API.
  const ports = [variables.FERRY_HTTP_PORT, variables.FERRY_OPS_PORT, variables.FERRY_GRPC_PORT];
  assert.equal(
    runtime?.body.find((i) => i.keyword === 'EXPOSE')?.args,
    ports.map((port) => port.fallback).join(' '),
  );
  assert.equal(new Set(ports.map((port) => port.fallback)).size, 3);
});

test('the runtime environment caps the allocator arenas and is read as the benchmarks read it', () => {
  assert.deepEqual(stageEnv(runtime), {
    NODE_ENV: 'production',
    MALLOC_ARENA_MAX: '2',
    MALLOC_MMAP_THRESHOLD_: '131072',
  });
  assert.deepEqual(stageEnv({ body: [{ keyword: 'ENV', args: 'A=1 B=x=y' }] }), {
    A: '1',
    B: 'x=y',
  });
  assert.throws(() => stageEnv({ body: [{ keyword: 'ENV', args: 'A 1' }] }), /key=value/);
});
