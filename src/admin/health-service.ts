/**
 * The standard grpc.health.v1.Health service, so Kubernetes gRPC probes
 * and grpc_health_probe work: SERVING only while Kafka is connected and the
 * server is not stopping. No auth: probes carry no token.
 */
import { status } from '@grpc/grpc-js';
import { RpcError } from './admin-status.ts';
import {
  type Health,
  HealthCheckResponse_ServingStatus as ServingStatus,
} from './gen/grpc/health/v1/health_pb.ts';
import type { MethodsOf, ServiceHandlers } from './grpc-service.ts';

export type HealthHandlers = ServiceHandlers<MethodsOf<typeof Health>>;

export interface HealthServiceOptions {
  /** The services a probe may name; "" (the whole server) is always known. */
  readonly services: readonly string[];
  /** Whether the server can do its job now (Kafka connected, not stopping). */
  readonly isServing: () => boolean;
  /** How often Watch looks for a change. Default 1000 ms. */
  readonly watchIntervalMs?: number;
  /** Open Watch streams at once; one more is refused with RESOURCE_EXHAUSTED. Default 100. */
  readonly maxWatches?: number;
}

/** Builds the handlers of Check, List and Watch. */
export function createHealthHandlers(options: HealthServiceOptions): HealthHandlers {
  const known = new Set(['', ...options.services]);
  const current = () => (options.isServing() ? ServingStatus.SERVING : ServingStatus.NOT_SERVING);
  const watchIntervalMs = options.watchIntervalMs ?? 1000;
  const maxWatches = options.maxWatches ?? 100;
  // Each stream holds a timer and a connection's stream until its client leaves.
  let openWatches = 0;
  return {
    async check(request) {
      if (!known.has(request.service)) {
        throw new RpcError(status.NOT_FOUND, `unknown service ${request.service}`);
      }
      return { status: current() };
    },
    async list() {
      const now = current();
      return { statuses: Object.fromEntries([...known].map((name) => [name, { status: now }])) };
    },
    async watch(request, send, context) {
      if (openWatches >= maxWatches) {
        throw new RpcError(
          status.RESOURCE_EXHAUSTED,
          `too many Health.Watch streams open (at most ${maxWatches}); use Check, or retry later`,
        );
      }
      openWatches++;
      try {
        await watchUntilAborted(request.service, send, context.signal);
      } finally {
        openWatches--;
      }
    },
  };

  function watchUntilAborted(
    service: string,
    send: (response: { status: ServingStatus }) => void,
    signal: AbortSignal,
  ): Promise<void> {
    // spec (grpc health-checking.md): an unknown service is SERVICE_UNKNOWN, and the stream stays open.
    const statusOf = () => (known.has(service) ? current() : ServingStatus.SERVICE_UNKNOWN);
    let last = statusOf();
    send({ status: last });
    return new Promise<void>((resolve) => {
      if (signal.aborted) return resolve();
      const timer = setInterval(() => {
        const now = statusOf();
        if (now !== last) {
          last = now;
          send({ status: now });
        }
      }, watchIntervalMs);
      signal.addEventListener(
        'abort',
        () => {
          clearInterval(timer);
          resolve();
        },
        { once: true },
      );
    });
  }
}
