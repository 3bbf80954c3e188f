/**
 * The operations routes, served on the operations port (FERRY_OPS_PORT) apart from the
 * public callback route (README, HTTP, metrics and logs): `GET /metrics` (Prometheus text
 * format), `GET /healthz` (process alive) and `GET /readyz` (Kafka connected and consumer
 * running). A port of their own, because a flood of the public route that failed the
 * liveness probe would get the pod restarted by its own kubelet. Kubernetes restarts a pod
 * whose liveness fails and stops routing to one whose readiness fails, so
 * liveness must only fail when a restart helps (a wedged process), never because
 * Kafka or the gateway is down.
 */
import { type HttpServer, sendJson, sendText } from '../http/http-server.ts';
import type { FerryMetrics } from './metrics.ts';
import { type MetricJson, mergeMetrics, metricsText } from './metrics-merge.ts';

/** What the process says about itself; implemented by the daemon. */
export interface HealthSource {
  /** false only when the process cannot recover by itself and should be restarted. */
  live(): boolean;
  /** Ready to take traffic: Kafka connected and the consumer running; `reasons` say what is missing. */
  ready(): { ready: boolean; reasons: string[] };
}

/** What {@link registerOpsRoutes} serves. */
export interface OpsRoutesOptions {
  readonly metrics: Pick<FerryMetrics, 'registry'>;
  readonly health: HealthSource;
  /** Metrics another thread of the process keeps (the urgent lane's), served with these. */
  readonly otherMetrics?: () => Promise<MetricJson[]>;
}

/**
 * Adds `GET /metrics`, `GET /healthz` and `GET /readyz` to `server` (before it starts).
 * `/healthz` answers 200 `ok` or 503; `/readyz` answers 200 `{"ready":true,"reasons":[]}`
 * or 503 with the reasons; a health source that throws counts as not healthy.
 *
 * @throws FerryError `illegal_state` when the server already started.
 */
export function registerOpsRoutes(server: HttpServer, options: OpsRoutesOptions): void {
  const { registry } = options.metrics;
  const { health, otherMetrics } = options;

  server.route('GET', '/metrics', async (_req, res) => {
    const text = otherMetrics
      ? await metricsText(mergeMetrics(await registry.getMetricsAsJSON(), await otherMetrics()))
      : await registry.metrics();
    res.writeHead(200, {
      'Content-Type': registry.contentType,
      'Content-Length': Buffer.byteLength(text),
      'Cache-Control': 'no-store',
    });
    res.end(text);
  });

  server.route('GET', '/healthz', (_req, res) => {
    let live = false;
    try {
      live = health.live();
    } catch {
      live = false;
    }
    sendText(res, live ? 200 : 503, live ? 'ok\n' : 'not alive\n');
  });

  server.route('GET', '/readyz', (_req, res) => {
    let state: { ready: boolean; reasons: string[] };
    try {
      state = health.ready();
    } catch (error: unknown) {
      state = {
        ready: false,
        reasons: [`readiness check failed: ${error instanceof Error ? error.message : 'unknown'}`],
      };
    }
    sendJson(res, state.ready ? 200 : 503, { ready: state.ready, reasons: state.reasons });
  });
}
