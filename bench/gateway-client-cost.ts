/**
 * CPU per gateway request of ferry's HTTP client (`GatewayHttp`, Node's own http agents)
 * against an undici Pool, the client it replaced: each client runs in a fresh child
 * process posting the same two-operation envelope to a local `node:http` server, one
 * request at a time, 200 warm-up requests first; the child's user + system CPU over the
 * measured requests is divided by their count. Alternates the two, `rounds` times each.
 * Usage: node bench/gateway-client-cost.ts [requests, default 5000] [rounds, default 3]
 */
import { fork } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Pool } from 'undici';
import { GatewayHttp } from '../src/upstream/gateway-http.ts';

type Client = 'ferry' | 'undici';

const body = JSON.stringify({
  operations: [0, 1].map((id) => ({
    type: 'sms',
    id,
    phone: '380000000000',
    text: 'Your code is 123456',
  })),
});

function poster(client: Client, url: string): (text: string) => Promise<string> {
  if (client === 'undici') {
    const pool = new Pool(new URL(url).origin, { connections: 8 });
    return async (text) => {
      const answer = await pool.request({
        method: 'POST',
        path: '/api/json.php',
        headers: { 'content-type': 'application/json' },
        body: text,
      });
      return answer.body.text();
    };
  }
  const http = new GatewayHttp({ syncBaseUrl: url, connections: 8 });
  return async (text) => (await http.post('sync', text)).body;
}

async function child(client: Client, url: string, requests: number): Promise<void> {
  const post = poster(client, url);
  for (let i = 0; i < 200; i++) await post(body);
  const before = process.cpuUsage();
  const started = performance.now();
  for (let i = 0; i < requests; i++) await post(body);
  const cpu = process.cpuUsage(before);
  const wallUs = ((performance.now() - started) * 1000) / requests;
  const perRequest = (us: number) => (us / requests).toFixed(0);
  console.log(
    `${client.padEnd(6)} ${requests} requests: CPU ${perRequest(cpu.user + cpu.system)} µs/request (user ${perRequest(cpu.user)}, system ${perRequest(cpu.system)}), wall ${wallUs.toFixed(0)} µs/request`,
  );
  process.exit(0);
}

if (process.argv[2] === '--child') {
  await child(process.argv[3] as Client, process.argv[4] ?? '', Number(process.argv[5]));
} else {
  const requests = Number(process.argv[2] ?? 5000);
  const rounds = Number(process.argv[3] ?? 3);
  const server = createServer((request, response) => {
    request.resume();
    request.on('end', () => response.end('{"success":true,"data":[]}'));
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  for (let round = 0; round < rounds; round++) {
    for (const client of ['undici', 'ferry'] as const) {
      const running = fork(import.meta.filename, ['--child', client, url, String(requests)]);
      await once(running, 'exit');
    }
  }
  server.close();
}
