import { createServer } from 'node:net';
import type { TestContext } from 'node:test';
import { AdminServer, type AdminServerOptions } from '../../src/admin/admin-server.ts';
import type {
  DeadLetterReplayer,
  ListRequest,
  ReplayRequest,
} from '../../src/admin/dead-letter-replay.ts';
import { AdminService } from '../../src/admin/gen/ferry/admin/v1/admin_pb.ts';
import { Health } from '../../src/admin/gen/grpc/health/v1/health_pb.ts';
import { type ClientOf, GrpcClient } from '../../src/admin/grpc-client.ts';
import { createEmulator, type Emulator } from '../../src/emulator/index.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics, type FerryMetrics } from '../../src/observability/metrics.ts';
import { GatewayClient } from '../../src/upstream/gateway-client.ts';
import { GatewayHttp } from '../../src/upstream/gateway-http.ts';
import { InMemoryPipeline } from './in-memory-pipeline.ts';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';
export const API_KEY = 'emulator-key';
/** The release the fixture's GetPipelineState reports. */
export const FIXTURE_VERSION = '9.8.7-test';

/** A replayer that records what it was asked (the Kafka one is tested against the broker). */
export class RecordingReplayer implements DeadLetterReplayer {
  readonly requests: ReplayRequest[] = [];
  async replay(request: ReplayRequest) {
    this.requests.push(request);
    return { replayed: 0, scanned: 0, skipped: 0, alreadyReplayed: 0, limitReached: false };
  }
  readonly listRequests: ListRequest[] = [];
  async list(request: ListRequest) {
    this.listRequests.push(request);
    return { deadLetters: [], scanned: 0, limitReached: false };
  }
}

export interface AdminFixture {
  readonly emulator: Emulator;
  readonly server: AdminServer;
  readonly pipeline: InMemoryPipeline;
  readonly gateway: GatewayClient;
  readonly replayer: DeadLetterReplayer;
  readonly kafka: { connected: boolean };
  /** Where the server counts refused calls (or the `metrics` override). */
  readonly metrics: AdminServerOptions['metrics'];
  readonly address: string;
  /** A client with the right token; more with `client(token)`. */
  readonly admin: ClientOf<typeof AdminService>;
  client(token?: string): AdminFixture['admin'];
  health(): ClientOf<typeof Health>;
}

/** A port nothing listens on: bound, then closed. */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/**
 * The admin server wired to a real emulator on loopback, torn down after the test
 * (or suite) whose context is given.
 */
export async function startAdmin(
  t: Pick<TestContext, 'after'>,
  overrides: Partial<AdminServerOptions> & { syncBaseUrl?: string } = {},
): Promise<AdminFixture> {
  const emulator = createEmulator({ apiKey: API_KEY, port: 0, initialBalance: 1000, seed: 7 });
  await emulator.start();
  const http = new GatewayHttp({
    syncBaseUrl: overrides.syncBaseUrl ?? emulator.url,
    requestTimeoutMs: 5000,
  });
  const gateway = new GatewayClient({ http, apiKey: API_KEY });
  const pipeline = new InMemoryPipeline();
  const kafka = { connected: true };
  const replayer = overrides.deadLetters ?? new RecordingReplayer();
  const metrics: Pick<FerryMetrics, 'adminCallsRefused'> = overrides.metrics ?? createMetrics();
  const server = new AdminServer({
    host: '127.0.0.1',
    port: 0,
    gateway,
    pipeline,
    deadLetters: replayer,
    adminToken: ADMIN_TOKEN,
    isKafkaConnected: () => kafka.connected,
    logger: createLogger({ level: 'silent' }),
    metrics,
    version: FIXTURE_VERSION,
    ...overrides,
  });
  await server.start();
  const address = `127.0.0.1:${server.port}`;
  const clients: { close(): void }[] = [];
  const client = (token?: string) => {
    const c = new GrpcClient(AdminService, { address, token });
    clients.push(c);
    return c;
  };
  const health = () => {
    const c = new GrpcClient(Health, { address });
    clients.push(c);
    return c;
  };
  t.after(async () => {
    for (const c of clients) c.close();
    await server.stop(1000);
    await http.destroy();
    await emulator.stop();
  });
  return {
    emulator,
    server,
    pipeline,
    gateway,
    replayer,
    kafka,
    metrics,
    address,
    admin: client(ADMIN_TOKEN),
    client,
    health,
  };
}
