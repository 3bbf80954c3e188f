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
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
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
import {
  dockerStages,
  entrypoint,
  imageEnv,
  imageLayout,
  outDir,
  runtimeStage as runtime,
} from '../helpers/image-layout.ts';
import { repoRoot } from './external-tools.ts';

const build = dockerStages.find((stage) => stage.name === 'build');
/** The HEALTHCHECK's command (exec form, after its options): `node -e …`. */
const healthcheckArgs = JSON.parse(
  /\bCMD\s+(\[.*\])\s*$/s.exec(
    runtime?.body.find((i) => i.keyword === 'HEALTHCHECK')?.args ?? '',
  )?.[1] ?? '[]',
) as string[];

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
      ...imageEnv(),
      FERRY_HTTP_PORT: String(httpPort),
      FERRY_OPS_PORT: String(opsPort),
    },
    { args, cwd: dir },
  );
  await waitForLog(ferry, 'ferry is running', 60_000);
  // Ready once its partitions are taken over, shortly after it runs.
  let ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
  for (let i = 0; i < 200 && ready.status !== 200; i++) {
    await ready.arrayBuffer();
    await new Promise((resolve) => setTimeout(resolve, 50));
    ready = await fetch(`http://127.0.0.1:${opsPort}/readyz`);
  }
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
