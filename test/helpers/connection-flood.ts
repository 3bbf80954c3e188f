/**
 * One client flooding an HTTP port with connections, as the attacker seen against ferry did:
 * it keeps `connections` open from one local address and opens a new one the moment one is
 * closed; half of them send nothing, half send a request head one line a second and never end
 * it. It reads what it is sent (and throws it away), so it learns of every close. It runs in a
 * worker thread, so its loop does not share an event loop with the ferry under test.
 */
import { connect, type Socket } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { isMainThread, parentPort, Worker, workerData } from 'node:worker_threads';

export interface FloodSettings {
  readonly host: string;
  readonly port: number;
  /** The address the client connects from, e.g. 127.0.0.1 (any address of 127.0.0.0/8 works). */
  readonly localAddress: string;
  /** Connections the client tries to hold at once. */
  readonly connections: number;
  readonly durationMs: number;
}

export interface FloodFigures {
  /** Connections tried. */
  readonly attempted: number;
  /** Connections opened (the client saw the handshake done; a reset can come before). */
  readonly opened: number;
  /** Of those, closed by the server within 100 ms of opening without a byte sent back. */
  readonly refusedAtOnce: number;
  /** Of those, closed by the server after it answered something (e.g. 408). */
  readonly cutAfterAnswer: number;
}

async function flood(settings: FloodSettings): Promise<FloodFigures> {
  let running = true;
  let attempted = 0;
  let opened = 0;
  let refusedAtOnce = 0;
  let cutAfterAnswer = 0;
  const openSockets = new Set<Socket>();

  const open = (slow: boolean): void => {
    if (!running) return;
    attempted += 1;
    const socket = connect({
      host: settings.host,
      port: settings.port,
      localAddress: settings.localAddress,
    });
    let connectedAt = 0;
    let answered = false;
    let drip: NodeJS.Timeout | undefined;
    socket.on('error', () => undefined);
    socket.on('data', () => {
      answered = true;
    });
    socket.once('connect', () => {
      connectedAt = Date.now();
      opened += 1;
      openSockets.add(socket);
      if (slow) {
        socket.write('POST /callbacks/x HTTP/1.1\r\nHost: ferry\r\n');
        drip = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 1_000);
      }
    });
    socket.once('close', () => {
      clearInterval(drip);
      openSockets.delete(socket);
      if (connectedAt > 0) {
        if (answered) cutAfterAnswer += 1;
        else if (Date.now() - connectedAt < 100) refusedAtOnce += 1;
      }
      // The next one at once, as the attacker did; setImmediate so a refusal storm still
      // lets this worker's timers run.
      if (running) setImmediate(() => open(slow));
    });
  };

  for (let i = 0; i < settings.connections; i += 1) open(i % 2 === 1);
  await sleep(settings.durationMs);
  running = false;
  for (const socket of openSockets) socket.destroy();
  return { attempted, opened, refusedAtOnce, cutAfterAnswer };
}

/** Floods from a worker thread; resolves with what the client saw once `durationMs` passed. */
export function startFlood(settings: FloodSettings): Promise<FloodFigures> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(new URL(import.meta.url), { workerData: settings });
    worker.once('message', (figures: FloodFigures) => resolve(figures));
    worker.once('error', reject);
    worker.once('exit', (code) => {
      if (code !== 0) reject(new Error(`the flood worker exited with ${code}`));
    });
  });
}

if (!isMainThread && parentPort) {
  const port = parentPort;
  void flood(workerData as FloodSettings).then((figures) => {
    port.postMessage(figures);
    port.close();
  });
}
