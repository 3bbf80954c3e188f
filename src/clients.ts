/**
 * The clients a thread of ferry talks through, built the same way wherever a thread
 * needs its own: the Kafka client and the gateway's HTTP client. The main thread and the
 * urgent lane's worker thread each build theirs (kafkajs clients and HTTP agents are not shared
 * across threads).
 */
import type { Config } from './config/config.ts';
import type { KafkaSecurity } from './config/kafka-security.ts';
import { KafkaClient } from './kafka/kafka-client.ts';
import type { Logger } from './observability/logger.ts';
import type { FerryMetrics } from './observability/metrics.ts';
import { GatewayClient } from './upstream/gateway-client.ts';
import { GatewayHttp } from './upstream/gateway-http.ts';

export function createKafkaClient(
  config: Config,
  { logger, metrics, security }: { logger: Logger; metrics: FerryMetrics; security: KafkaSecurity },
): KafkaClient {
  return new KafkaClient({
    brokers: config.FERRY_KAFKA_BROKERS,
    clientId: config.FERRY_KAFKA_CLIENT_ID,
    security,
    logger,
    compression: config.FERRY_KAFKA_COMPRESSION,
    onError: (client, kind) => metrics.kafkaErrors.inc({ client, kind }),
    onTransactionalRequest: (api) => metrics.kafkaTransactionalRequests.inc({ api }),
    // A record batch is judged as a whole against max.message.bytes: several results or
    // dead letters in one request must fit the same limit a single one does.
    maxProduceBytes: Math.min(512 * 1024, config.FERRY_RECORD_MAX_BYTES),
  });
}

/**
 * The gateway's HTTP client and the API client over it. @param connections envelopes in
 * flight at once, each on a connection of its own.
 */
export function createGateway(
  config: Config,
  metrics: FerryMetrics,
  connections: number,
): { http: GatewayHttp; client: GatewayClient } {
  const http = new GatewayHttp({
    syncBaseUrl: config.FERRY_SYNC_BASE_URL,
    asyncBaseUrl: config.FERRY_ASYNC_BASE_URL,
    requestTimeoutMs: config.FERRY_REQUEST_TIMEOUT_MS,
    connections: Math.max(8, connections),
  });
  const client = new GatewayClient({
    http,
    apiKey: config.FERRY_API_KEY,
    onRequest: (transport, outcome, seconds) => {
      metrics.gatewayRequests.inc({ transport, outcome });
      metrics.gatewayRequestDuration.observe({ transport, outcome }, seconds);
    },
  });
  return { http, client };
}
