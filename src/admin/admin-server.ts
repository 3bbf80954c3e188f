/**
 * The gRPC admin server (README, Admin API): AdminService behind a
 * bearer token, the standard Health service and server reflection without one,
 * optional TLS and mutual TLS.
 */
import { readFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { Server, ServerCredentials, status } from '@grpc/grpc-js';
import { ConfigError, FerryError } from '../errors.ts';
import { LogSampler } from '../observability/log-sampler.ts';
import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import type { PipelineControl } from '../pipeline/pipeline-control.ts';
import { AdminAuthError, bearerTokenGate } from './admin-auth.ts';
import { createAdminHandlers, type FleetAdmin, type SyncCaller } from './admin-handlers.ts';
import { type AdminLimits, defaultAdminLimits, grpcServerOptions } from './admin-limits.ts';
import type { DeadLetterReplayer } from './dead-letter-replay.ts';
import { AdminService, file_ferry_admin_v1_admin } from './gen/ferry/admin/v1/admin_pb.ts';
import { file_grpc_health_v1_health, Health } from './gen/grpc/health/v1/health_pb.ts';
import { implementService, serviceDefinition } from './grpc-service.ts';
import { createHealthHandlers } from './health-service.ts';
import { addReflection } from './reflection.ts';

/** File paths of the server's TLS material (PEM). */
export interface AdminTlsFiles {
  /** FERRY_GRPC_TLS_CERT_FILE: the server certificate chain. */
  readonly certFile: string;
  /** FERRY_GRPC_TLS_KEY_FILE: its private key. */
  readonly keyFile: string;
  /** FERRY_GRPC_TLS_CLIENT_CA_FILE: when set, clients must present a certificate it signed (mTLS). */
  readonly clientCaFile?: string | undefined;
}

export interface AdminServerOptions {
  /** Address to listen on, e.g. `127.0.0.1` or `0.0.0.0`. */
  readonly host: string;
  /** FERRY_GRPC_PORT; 0 picks a free port (tests). */
  readonly port: number;
  readonly gateway: SyncCaller;
  readonly pipeline: PipelineControl;
  readonly deadLetters: DeadLetterReplayer;
  /** The fleet's control topic: pipeline RPCs then steer and show every replica. */
  readonly fleet?: FleetAdmin | undefined;
  /** FERRY_ADMIN_TOKEN. Required unless `host` is a loopback address. */
  readonly adminToken?: string | undefined;
  readonly tls?: AdminTlsFiles | undefined;
  /** Health says SERVING only while this answers true. */
  readonly isKafkaConnected: () => boolean;
  readonly logger: Logger;
  /** Counts every call refused for its token (`ferry_admin_calls_refused_total`). */
  readonly metrics: Pick<FerryMetrics, 'adminCallsRefused'>;
  /** Message, stream and Health.Watch bounds; default `defaultAdminLimits`. */
  readonly limits?: AdminLimits | undefined;
  /** The release GetPipelineState reports. */
  readonly version?: string | undefined;
}

type ServerState = 'new' | 'starting' | 'running' | 'stopping' | 'stopped';

const adminServiceName = AdminService.typeName;

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  return host === '::1' || host === '[::1]';
}

function bindAddress(host: string, port: number): string {
  return isIP(host) === 6 ? `[${host}]:${port}` : `${host}:${port}`;
}

async function credentials(tls: AdminTlsFiles | undefined): Promise<ServerCredentials> {
  if (!tls) return ServerCredentials.createInsecure();
  const read = async (variable: string, path: string) => {
    try {
      return await readFile(path);
    } catch (error: unknown) {
      const reason = error instanceof Error ? error.message : String(error);
      throw new ConfigError(variable, `cannot read ${path}: ${reason}`);
    }
  };
  const [cert, key, clientCa] = await Promise.all([
    read('FERRY_GRPC_TLS_CERT_FILE', tls.certFile),
    read('FERRY_GRPC_TLS_KEY_FILE', tls.keyFile),
    tls.clientCaFile ? read('FERRY_GRPC_TLS_CLIENT_CA_FILE', tls.clientCaFile) : undefined,
  ]);
  return ServerCredentials.createSsl(
    clientCa ?? null,
    [{ cert_chain: cert, private_key: key }],
    clientCa !== undefined,
  );
}

/**
 * The admin gRPC server. `start()` binds and serves; `stop()` refuses new calls,
 * lets calls in flight finish within the grace time, then cancels them.
 */
export class AdminServer {
  readonly #options: AdminServerOptions;
  readonly #log: Logger;
  /**
   * Failed calls are logged through this: anyone who reaches the port can make calls
   * without a token, each a failure, so their lines are limited per gRPC code (the
   * refusals are still counted, in full, by the metric).
   */
  readonly #failures: LogSampler;
  #server: Server | undefined;
  #state: ServerState = 'new';
  #port = 0;
  /** Ends Health Watch streams at stop (they would hold a graceful shutdown forever). */
  #watchStop = new AbortController();
  /** Cancels admin calls still running after the grace time. */
  #callStop = new AbortController();

  /** @throws ConfigError `FERRY_ADMIN_TOKEN` when there is no token and `host` is not loopback. */
  constructor(options: AdminServerOptions) {
    if (!options.adminToken && !isLoopback(options.host)) {
      throw new ConfigError(
        'FERRY_ADMIN_TOKEN',
        `required when the admin API listens beyond loopback (host ${options.host})`,
      );
    }
    this.#options = options;
    this.#log = options.logger.child({ component: 'admin' });
    this.#failures = new LogSampler({ logger: this.#log });
  }

  /** The bound port (useful with port 0). @throws FerryError `illegal_state` before start. */
  get port(): number {
    if (this.#state !== 'running') {
      throw new FerryError('illegal_state', `the admin server is ${this.#state}`, {
        retryable: false,
      });
    }
    return this.#port;
  }

  get state(): ServerState {
    return this.#state;
  }

  #onCallEnd = (path: string, code: status, durationMs: number, error?: Error) => {
    const fields = { path, code, durationMs: Math.round(durationMs) };
    if (error instanceof AdminAuthError) {
      this.#options.metrics.adminCallsRefused.inc({ reason: error.reason });
    }
    if (code === status.OK) this.#log.info(fields, 'admin call finished');
    else {
      this.#failures.warn(
        `admin_call_failed:${status[code] ?? code}`,
        { ...fields, error: error?.message },
        'admin call failed',
      );
    }
  };

  #build(): Server {
    const options = this.#options;
    const limits = options.limits ?? defaultAdminLimits;
    const server = new Server(grpcServerOptions(limits));
    const gate = options.adminToken ? bearerTokenGate(options.adminToken) : undefined;
    server.addService(
      serviceDefinition(AdminService),
      implementService(
        AdminService,
        createAdminHandlers({
          gateway: options.gateway,
          pipeline: options.pipeline,
          deadLetters: options.deadLetters,
          ...(options.version === undefined ? {} : { version: options.version }),
          fleet: options.fleet,
        }),
        {
          ...(gate ? { gate } : {}),
          stopSignal: this.#callStop.signal,
          onCallEnd: this.#onCallEnd,
        },
      ),
    );
    server.addService(
      serviceDefinition(Health),
      implementService(
        Health,
        createHealthHandlers({
          services: [adminServiceName],
          isServing: () => this.#state === 'running' && options.isKafkaConnected(),
          maxWatches: limits.maxHealthWatches,
        }),
        { stopSignal: this.#watchStop.signal },
      ),
    );
    addReflection(server, [file_ferry_admin_v1_admin, file_grpc_health_v1_health]);
    return server;
  }

  /**
   * Binds and serves. Idempotent once running.
   * @throws ConfigError for unreadable TLS files; FerryError `illegal_state` after stop;
   *   the bind error (e.g. address in use).
   */
  async start(): Promise<void> {
    if (this.#state === 'running' || this.#state === 'starting') return;
    if (this.#state !== 'new') {
      throw new FerryError('illegal_state', `cannot start an admin server that is ${this.#state}`, {
        retryable: false,
      });
    }
    this.#state = 'starting';
    try {
      const creds = await credentials(this.#options.tls);
      const server = this.#build();
      this.#port = await new Promise<number>((resolve, reject) => {
        server.bindAsync(
          bindAddress(this.#options.host, this.#options.port),
          creds,
          (error, port) => (error ? reject(error) : resolve(port)),
        );
      });
      this.#server = server;
      this.#state = 'running';
      this.#log.info(
        {
          host: this.#options.host,
          port: this.#port,
          tls: this.#options.tls ? (this.#options.tls.clientCaFile ? 'mtls' : 'tls') : 'off',
          auth: this.#options.adminToken ? 'bearer' : 'off (loopback only)',
        },
        'admin server listening',
      );
      if (!this.#options.tls && !isLoopback(this.#options.host)) {
        // The bearer token and every answer (balances, HLR results, dead letters with
        // phone numbers) cross the network in clear text.
        this.#log.warn(
          { host: this.#options.host, port: this.#port },
          'the admin API listens beyond loopback WITHOUT TLS: the admin token and every answer travel in clear text; set FERRY_GRPC_TLS_CERT_FILE and FERRY_GRPC_TLS_KEY_FILE, or FERRY_GRPC_HOST=127.0.0.1',
        );
      }
    } catch (error: unknown) {
      this.#state = 'new';
      throw error;
    }
  }

  /**
   * Stops accepting calls, waits up to `graceMs` for calls in flight, then cancels
   * what is left. Idempotent.
   * @param graceMs default 5000.
   */
  async stop(graceMs = 5000): Promise<void> {
    const server = this.#server;
    if (this.#state === 'stopped' || this.#state === 'stopping') return;
    this.#state = 'stopping';
    this.#watchStop.abort();
    if (server) {
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          this.#callStop.abort();
          server.forceShutdown();
          resolve();
        }, graceMs);
        server.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    }
    this.#server = undefined;
    this.#state = 'stopped';
    this.#failures.flush();
    this.#log.info('admin server stopped');
  }
}
