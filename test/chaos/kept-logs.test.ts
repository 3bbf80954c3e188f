import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { lastOpsPort, saveReplicaMetrics } from './kept-logs.ts';

const listening = (port: number, listener = 'ops') =>
  JSON.stringify({
    level: 'info',
    component: 'http',
    listener,
    port,
    msg: 'HTTP server listening.',
  });

test('the port is the operations port the replica announced last (it may have restarted)', () => {
  const log = [
    listening(1111),
    listening(1112, 'http'),
    '{"msg":"ferry is running","port":9}',
    listening(2222),
    listening(2223, 'http'),
    '',
  ].join('\n');
  assert.equal(lastOpsPort(log), 2222);
  assert.equal(lastOpsPort(`${listening(3333, 'http')}\n`), undefined, 'not the callbacks port');
  assert.equal(lastOpsPort('{"msg":"configuration loaded"}\n'), undefined);
});

test('each replica that answers has its metrics saved beside its log', async (t) => {
  const server = createServer((request, response) => {
    response.end(
      request.url === '/metrics' ? 'ferry_consumption_paused{reason="backpressure"} 1\n' : '',
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const dir = await mkdtemp(join(tmpdir(), 'kept-logs-'));
  t.after(async () => {
    server.close();
    await rm(dir, { recursive: true, force: true });
  });
  const { port } = server.address() as AddressInfo;
  await writeFile(join(dir, 'replica-1.log'), `${listening(port)}\n`);
  await writeFile(join(dir, 'replica-2.log'), '{"msg":"stopped"}\n');
  await saveReplicaMetrics(dir, ['replica-1', 'replica-2', 'replica-3']);
  assert.match(await readFile(join(dir, 'replica-1.metrics.txt'), 'utf8'), /backpressure/);
  await assert.rejects(readFile(join(dir, 'replica-2.metrics.txt')), 'no port: nothing saved');
});
