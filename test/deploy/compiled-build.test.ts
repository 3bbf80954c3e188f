/**
 * The container runs compiled JavaScript. No Docker engine runs here, so this test
 * rebuilds the runtime stage's layout from deploy/Dockerfile in a temporary folder:
 * each COPY of the runtime stage, with the build stage's compiler run into the folder
 * its dist/ copy names, then starts the ENTRYPOINT there: `--version`, and a real start
 * against the test broker and the emulator that answers /readyz and turns a command
 * into a result.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseDockerfile, stageEnv } from '../../tools/deploy/dockerfile.ts';
import { freePort } from '../../tools/kafka/broker.ts';
import { smsOperation } from '../fixtures/operations.ts';
import {
  command,
  produce,
  readRecords,
  startEmulator,
  startFerry,
  testTopics,
} from '../helpers/ferry.ts';
import { spawnFerry, waitForLog } from '../helpers/ferry-process.ts';
import { repoRoot } from './external-tools.ts';

const stages = parseDockerfile(readFileSync(join(repoRoot, 'deploy/Dockerfile'), 'utf8'));
const build = stages.find((stage) => stage.name === 'build');
const runtime = stages.at(-1);
const workdir = runtime?.body.find((i) => i.keyword === 'WORKDIR')?.args ?? '';
const entrypoint = JSON.parse(
  runtime?.body.find((i) => i.keyword === 'ENTRYPOINT')?.args ?? '[]',
) as string[];
/** The HEALTHCHECK's command (exec form, after its options): `node -e …`. */
const healthcheckArgs = JSON.parse(
  /\bCMD\s+(\[.*\])\s*$/s.exec(
    runtime?.body.find((i) => i.keyword === 'HEALTHCHECK')?.args ?? '',
  )?.[1] ?? '[]',
) as string[];
const outDir = (
  JSON.parse(readFileSync(join(repoRoot, 'tsconfig.build.json'), 'utf8')) as {
    compilerOptions: { outDir: string };
  }
).compilerOptions.outDir;

/** The runtime stage's files in a fresh folder, compiled code included; removed after the test. */
function imageLayout(): string {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-image-'));
  for (const copy of runtime?.body.filter((i) => i.keyword === 'COPY') ?? []) {
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

test('the Dockerfile compiles with tsconfig.build.json and runs what that produces', () => {
  const compile = build?.body.filter((i) => i.keyword === 'RUN').at(-1)?.args ?? '';
  assert.match(compile, /tsc -p tsconfig\.build\.json$/);
  assert.equal(entrypoint[0], 'node');
  assert.equal(entrypoint.at(-1), `${outDir}/main.js`);
});

test('the compiled build in the image layout prints its version and serves commands', async (t) => {
  const dir = imageLayout();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  assert.ok(existsSync(join(dir, outDir, 'main.js')));
  assert.ok(!existsSync(join(dir, 'src')), 'the image holds no TypeScript sources');
  const args = entrypoint.slice(1);
  const version = spawnSync(process.execPath, [...args, '--version'], {
    cwd: dir,
    encoding: 'utf8',
  });
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as {
    version: string;
  };
  assert.equal(version.status, 0, version.stderr);
  assert.equal(version.stdout.trim(), `ferry ${pkg.version}`);

  const emulator = await startEmulator(t);
  // An in-process instance creates the topics; the compiled one then runs on them.
  const setup = await startFerry(t, emulator, {}, testTopics());
  await setup.daemon.stop();
  const httpPort = await freePort();
  const opsPort = await freePort();
  const ferry = spawnFerry(
    t,
    // With the image's environment, as the container would start it.
    {
      ...setup.env,
      ...stageEnv(runtime),
      FERRY_HTTP_PORT: String(httpPort),
      FERRY_OPS_PORT: String(opsPort),
    },
    { args, cwd: dir },
  );
  await waitForLog(ferry, 'ferry is running', 60_000);
  const ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
  assert.equal(ready.status, 200, await ready.text());
  const elsewhere = await fetch(`http://127.0.0.1:${httpPort}/readyz`);
  assert.equal(elsewhere.status, 404, 'the probes are on the operations port only');
  await elsewhere.arrayBuffer();
  // The image's HEALTHCHECK, as `docker run` would run it: healthy here, not on another port.
  const healthcheck = (port: number) =>
    spawnSync(process.execPath, healthcheckArgs.slice(1), {
      env: { PATH: process.env.PATH ?? '', FERRY_OPS_PORT: String(port) },
      encoding: 'utf8',
      timeout: 10_000,
    }).status;
  assert.equal(healthcheck(opsPort), 0);
  assert.equal(healthcheck(httpPort), 1);
  await produce(t, [command(setup.topics.commands, smsOperation(4242))]);
  const [result] = await readRecords(t, setup.topics.results, 1);
  assert.equal(result?.key, '4242');
  ferry.child.kill('SIGTERM');
  assert.equal(await ferry.exited(), 0, ferry.output());
});
