import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { test } from 'node:test';
import { brokerPorts, freePorts } from '../../tools/kafka/broker.ts';

test('ports asked for together are all different and free to listen on', async () => {
  const ports = await freePorts(64);
  assert.equal(new Set(ports).size, 64);
  // Each can be bound again at once: they were released, not kept.
  const servers = await Promise.all(
    ports.map(
      (port) =>
        new Promise<ReturnType<typeof createServer>>((listening, failed) => {
          const server = createServer();
          server.on('error', failed);
          server.listen(port, '127.0.0.1', () => listening(server));
        }),
    ),
  );
  await Promise.all(servers.map((server) => new Promise((closed) => server.close(closed))));
});

test("a broker's client and controller ports differ", async () => {
  for (let round = 0; round < 50; round += 1) {
    const { port, controllerPort } = await brokerPorts();
    assert.notEqual(port, controllerPort);
  }
});
