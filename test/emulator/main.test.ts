import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { createHttpClient } from './emulator-fixtures.ts';

const mainPath = new URL('../../src/emulator/main.ts', import.meta.url).pathname;

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const address = server.address();
  server.close();
  await once(server, 'close');
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

test('npm run emulator prints its URL, answers curl-style requests and stops on SIGTERM', async (t) => {
  const port = await freePort();
  const child = spawn(process.execPath, [mainPath], {
    env: { ...process.env, EMULATOR_API_KEY: 'main-key', EMULATOR_PORT: String(port) },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  t.after(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
  const line = await new Promise<string>((resolve, reject) => {
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString('utf8');
      if (output.includes('\n')) resolve(output);
    });
    child.once('exit', (code) => reject(new Error(`exited ${code}`)));
  });
  assert.match(line, new RegExp(`http://127\\.0\\.0\\.1:${port}`));
  assert.match(line, /curl /);
  const client = createHttpClient(t);
  const answer = await client.sync(`http://127.0.0.1:${port}`, [{ type: 'balance' }], 'main-key');
  assert.equal(answer.success, true);
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  assert.equal(code, 0);
});

test('npm run emulator without EMULATOR_API_KEY exits 1 with one line naming the variable', async () => {
  const env = { ...process.env };
  delete env.EMULATOR_API_KEY;
  const child = spawn(process.execPath, [mainPath], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString('utf8');
  });
  const [code] = await once(child, 'exit');
  assert.equal(code, 1);
  assert.match(stderr, /EMULATOR_API_KEY/);
  assert.equal(stderr.trim().split('\n').length, 1);
});
