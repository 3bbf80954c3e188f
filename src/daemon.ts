import { AdminServer } from './admin/admin-server.ts';
import { DeadLetterReplay } from './admin/dead-letter-replay.ts';
import { CallbackReceiver } from './callbacks/index.ts';
import { createGateway, createKafkaClient } from './clients.ts';
import type { Config } from './config/config.ts';
import { readKafkaSecurity } from './config/kafka-security.ts';
import { FleetControl } from './fleet/fleet-control.ts';
import { FleetReplay } from './fleet/replay-lock.ts';
import { newReplicaId, packageVersion } from './fleet/replica-id.ts';
import { type ConnectionRefusal, HttpServer } from './http/http-server.ts';
import { ControlTopic } from './kafka/control-topic.ts';
import { DeadLetterReader } from './kafka/dead-letter-reader.ts';
import { KafkaAccessCheck } from './kafka/kafka-access.ts';
import type { KafkaClient, RecordProducer } from './kafka/kafka-client.ts';
import { laneOptions, trackingTopicsOf, urgentDedupeTopicOf } from './lane-options.ts';
import { type HealthSource, registerOpsRoutes } from './observability/health.ts';
import { type Logger, lineWriterOf } from './observability/logger.ts';
import type { FerryMetrics, HttpPortLabel } from './observability/metrics.ts';
import type { Tracer } from './observability/tracing.ts';
import { BalancePoller } from './pipeline/balance-poller.ts';
import { Pipeline } from './pipeline/pipeline.ts';
import { PipelineLanes } from './pipeline/pipeline-lanes.ts';
import { RetryAfterHold } from './pipeline/retry-after-hold.ts';
import type { GatewayClient } from './upstream/gateway-client.ts';
import type { GatewayHttp } from './upstream/gateway-http.ts';
import { UrgentLaneThread } from './urgent-lane/urgent-lane-thread.ts';
import { FERRY_VERSION } from './version.ts';

export interface DaemonOptions {
  readonly config: Config;
  readonly logger: Logger;
  readonly metrics: FerryMetrics;
  /** The consumer stopped for good; main exits non-zero so the supervisor restarts ferry. */
  readonly onFatal: (error: Error) => void;
  /** Traces commands (OTEL_TRACES_EXPORTER=otlp); absent when tracing is off. Its owner stops it. */
  readonly tracer?: Tracer | undefined;
}

type DaemonState = 'idle' | 'starting' | 'running' | 'stopping' | 'stopped';

/**
 * The whole process: builds every component from the config and owns the order
 * in which they start and stop (STYLE: Lifecycle).
 */
export class Daemon implements HealthSource {
  readonly #options: DaemonOptions;
  readonly #log: Logger;
  readonly kafka: KafkaClient;
  readonly gatewayHttp: GatewayHttp;
  readonly gateway: GatewayClient;
  readonly pipeline: PipelineLanes;
  /** The urgent lane's thread, when FERRY_TOPIC_COMMANDS_URGENT is set. */
  readonly #urgent: UrgentLaneThread | undefined;
  /** The public port (FERRY_HTTP_PORT): the gateway's callbacks. */
  readonly http: HttpServer;
  /** The operations port (FERRY_OPS_PORT): `/metrics` and the health probes. */
  readonly ops: HttpServer;
  readonly #balance: BalancePoller;
  /** Publishes status events; only when callbacks are on (FERRY_CALLBACK_TOKEN). */
  readonly #statusProducer: RecordProducer | undefined;
  readonly #callbacks: CallbackReceiver | undefined;
  readonly #deadLetters: DeadLetterReader;
  /** Proves at start that every permission ferry needs on Kafka is granted. */
  readonly #kafkaAccess: KafkaAccessCheck;
  readonly admin: AdminServer;
  /** The fleet's control topic: desired state, replica states, the replay lock. */
  readonly fleet: FleetControl;
  #state: DaemonState = 'idle';
  #kafkaConnected = false;

  constructor(options: DaemonOptions) {
    this.#options = options;
    const { config, logger, metrics } = options;
    this.#log = logger.child({ component: 'daemon' });
    // PEM files are read once, here: a rotated certificate takes a restart.
    const security = readKafkaSecurity(config);
    this.kafka = createKafkaClient(config, { logger, metrics, security });
    const gateway = createGateway(config, metrics, config.FERRY_CONCURRENCY);
    this.gatewayHttp = gateway.http;
    this.gateway = gateway.client;
    // The gateway's Retry-After holds every request of this replica, whichever lane.
    const retryAfterHold = new RetryAfterHold(config.FERRY_RETRY_AFTER_MAX_MS);
    this.#urgent = config.FERRY_TOPIC_COMMANDS_URGENT
      ? new UrgentLaneThread({
          config,
          logger,
          writeLogLine: lineWriterOf(logger),
          retryAfterHold,
          onCrash: (error) => options.onFatal(error),
        })
      : undefined;
    this.pipeline = new PipelineLanes(
      new Pipeline(
        laneOptions(config, {
          retryAfterHold,
          kafka: this.kafka,
          gateway: this.gateway,
          logger,
          metrics,
          onCrash: (error: Error) => options.onFatal(error),
          tracer: options.tracer,
        }),
      ),
      this.#urgent,
    );
    // One server per audience: whatever load reaches the public callback route, the
    // kubelet's probes and Prometheus are answered on a port of their own. Both are bounded
    // the same way, each on its own.
    const bounds = (port: HttpPortLabel) => ({
      maxConnections: config.FERRY_HTTP_MAX_CONNECTIONS,
      maxConnectionsPerClient: config.FERRY_HTTP_MAX_CONNECTIONS_PER_CLIENT,
      maxHeaderBytes: config.FERRY_HTTP_MAX_HEADER_BYTES,
      onConnectionRefused: (reason: ConnectionRefusal) =>
        metrics.httpConnectionsRefused.inc({ port, reason }),
    });
    this.ops = new HttpServer({
      name: 'ops',
      host: config.FERRY_OPS_HOST,
      port: config.FERRY_OPS_PORT,
      logger,
      ...bounds('ops'),
    });
    const urgent = this.#urgent;
    registerOpsRoutes(this.ops, {
      metrics,
      health: this,
      ...(urgent ? { otherMetrics: () => urgent.metrics() } : {}),
    });
    this.http = new HttpServer({
      name: 'http',
      host: config.FERRY_HTTP_HOST,
      port: config.FERRY_HTTP_PORT,
      logger,
      ...bounds('http'),
      // A callback that misses the route (a public URL set with /callbacks twice, an
      // old path) is a lost delivery receipt: counted, so an alert can see it.
      onNotFound: (pathname) => {
        if (/^\/callbacks(\/|$)/.test(pathname) || pathname.includes('/callbacks/')) {
          metrics.callbacks.inc({ status: 'none', outcome: 'not_found' });
        }
      },
    });
    if (config.FERRY_CALLBACK_TOKEN) {
      this.#statusProducer = this.kafka.createProducer();
      this.#callbacks = new CallbackReceiver({
        server: this.http,
        producer: this.#statusProducer,
        statusTopic: config.FERRY_TOPIC_STATUS,
        unparsedTopic: config.FERRY_TOPIC_UNPARSED_CALLBACKS,
        propagateHeaders: config.FERRY_PROPAGATE_HEADERS,
        token: config.FERRY_CALLBACK_TOKEN,
        metrics,
        logger,
        tracking: trackingTopicsOf(config),
      });
    }
    this.#deadLetters = new DeadLetterReader({
      brokers: config.FERRY_KAFKA_BROKERS,
      clientId: `${config.FERRY_KAFKA_CLIENT_ID}-dlq-replay`,
      security,
      logger,
      deadLetterTopic: config.FERRY_TOPIC_DLQ,
      commandsTopic: config.FERRY_TOPIC_COMMANDS,
      progressGroupId: `${config.FERRY_KAFKA_GROUP}.dlq-replay`,
    });
    this.#kafkaAccess = new KafkaAccessCheck({
      brokers: config.FERRY_KAFKA_BROKERS,
      clientId: config.FERRY_KAFKA_CLIENT_ID,
      security,
      logger,
      topics: {
        commands: config.FERRY_TOPIC_COMMANDS,
        results: config.FERRY_TOPIC_RESULTS,
        status: config.FERRY_TOPIC_STATUS,
        dlq: config.FERRY_TOPIC_DLQ,
        unparsedCallbacks: config.FERRY_TOPIC_UNPARSED_CALLBACKS,
        control: config.FERRY_TOPIC_CONTROL,
        dedupe: config.FERRY_DEDUPE
          ? { topic: config.FERRY_TOPIC_DEDUPE, windowMs: config.FERRY_DEDUPE_WINDOW_MS }
          : undefined,
        urgent: config.FERRY_TOPIC_COMMANDS_URGENT
          ? {
              commands: config.FERRY_TOPIC_COMMANDS_URGENT,
              dedupe: config.FERRY_DEDUPE ? urgentDedupeTopicOf(config) : undefined,
            }
          : undefined,
        tracking: trackingTopicsOf(config),
      },
      topicSettings: {
        partitions: config.FERRY_TOPIC_PARTITIONS,
        replicationFactor: config.FERRY_TOPIC_REPLICATION_FACTOR,
        minInsyncReplicas: config.FERRY_TOPIC_MIN_INSYNC_REPLICAS,
        ...(config.FERRY_TOPIC_MAX_MESSAGE_BYTES
          ? { maxMessageBytes: config.FERRY_TOPIC_MAX_MESSAGE_BYTES }
          : {}),
      },
      recordMaxBytes: config.FERRY_RECORD_MAX_BYTES,
      groupId: config.FERRY_KAFKA_GROUP,
      replayGroupId: `${config.FERRY_KAFKA_GROUP}.dlq-replay`,
    });
    this.fleet = new FleetControl({
      log: new ControlTopic({
        brokers: config.FERRY_KAFKA_BROKERS,
        clientId: `${config.FERRY_KAFKA_CLIENT_ID}-control`,
        security,
        topic: config.FERRY_TOPIC_CONTROL,
        groupPrefix: `${config.FERRY_KAFKA_GROUP}.control`,
        logger,
      }),
      pipeline: this.pipeline,
      logger,
      replicaId: newReplicaId(),
      version: packageVersion(),
      groupLag: () => this.kafka.groupLag(config.FERRY_KAFKA_GROUP, config.FERRY_TOPIC_COMMANDS),
      groupLagTopic: config.FERRY_TOPIC_COMMANDS,
    });
    const tlsFiles =
      config.FERRY_GRPC_TLS_CERT_FILE && config.FERRY_GRPC_TLS_KEY_FILE
        ? {
            certFile: config.FERRY_GRPC_TLS_CERT_FILE,
            keyFile: config.FERRY_GRPC_TLS_KEY_FILE,
            ...(config.FERRY_GRPC_TLS_CLIENT_CA_FILE
              ? { clientCaFile: config.FERRY_GRPC_TLS_CLIENT_CA_FILE }
              : {}),
          }
        : undefined;
    this.admin = new AdminServer({
      // Without a token the admin API only listens on loopback: no one else can reach it unauthenticated.
      host: config.FERRY_ADMIN_LOOPBACK_ONLY ? '127.0.0.1' : config.FERRY_GRPC_HOST,
      port: config.FERRY_GRPC_PORT,
      gateway: this.gateway,
      pipeline: this.pipeline,
      deadLetters: new FleetReplay({
        replayer: new DeadLetterReplay(this.#deadLetters),
        fleet: this.fleet,
        logger,
      }),
      fleet: this.fleet,
      adminToken: config.FERRY_ADMIN_TOKEN,
      tls: tlsFiles,
      isKafkaConnected: () => this.#kafkaConnected && this.pipeline.running,
      logger,
      metrics,
      limits: {
        maxReceiveBytes: config.FERRY_GRPC_MAX_RECEIVE_BYTES,
        maxConcurrentStreams: config.FERRY_GRPC_MAX_CONCURRENT_STREAMS,
        maxHealthWatches: config.FERRY_GRPC_MAX_HEALTH_WATCHES,
      },
      version: FERRY_VERSION,
    });
    this.#balance = new BalancePoller({
      gateway: this.gateway,
      metrics,
      logger,
      intervalMs: config.FERRY_BALANCE_POLL_MS,
    });
  }

  get state(): DaemonState {
    return this.#state;
  }

  live(): boolean {
    return this.#state !== 'stopped';
  }

  ready(): { ready: boolean; reasons: string[] } {
    const reasons: string[] = [];
    if (this.#state !== 'running') reasons.push(`daemon ${this.#state}`);
    if (!this.#kafkaConnected) reasons.push('kafka not connected');
    if (!this.pipeline.running) reasons.push('consumer not running');
    else if (!this.pipeline.takenOver) reasons.push('partitions not taken over yet');
    return { ready: reasons.length === 0, reasons };
  }

  /**
   * Starts the operations port first (the probes answer while Kafka is checked), then the
   * callbacks' port, checks Kafka access (creating missing topics), then the pipeline and
   * the pollers. @throws FerryError.
   */
  async start(): Promise<void> {
    if (this.#state !== 'idle') return;
    this.#state = 'starting';
    const { config } = this.#options;
    this.#callbacks?.start();
    await this.ops.start();
    await this.http.start();
    // Creates missing topics (the control topic compacted, with one partition), checks
    // their settings and every permission ferry needs.
    await this.#kafkaAccess.run();
    await this.#statusProducer?.connect();
    this.#kafkaConnected = true;
    // The fleet's desired state applies before the first fetch: a paused fleet stays paused.
    await this.fleet.start();
    await this.pipeline.start();
    await this.admin.start();
    this.#balance.start();
    this.#state = 'running';
    this.#log.info(
      {
        httpPort: this.http.port,
        opsPort: this.ops.port,
        grpcPort: this.admin.port,
        commands: config.FERRY_TOPIC_COMMANDS,
      },
      'ferry is running',
    );
  }

  /**
   * Stops in order: readiness off, pipeline drained within the grace time, then the
   * callbacks' port and Kafka; the operations port last, so liveness holds while ferry
   * drains. @returns true when the pipeline drained in time.
   */
  async stop(): Promise<boolean> {
    if (this.#state === 'stopping' || this.#state === 'stopped') return true;
    this.#state = 'stopping';
    this.#balance.stop();
    // Health says NOT_SERVING from here on; admin calls in progress may finish.
    const drained = await this.pipeline.stop(this.#options.config.FERRY_SHUTDOWN_GRACE_MS);
    await this.#callbacks?.stop();
    await this.admin.stop(5_000);
    await this.fleet.stop();
    await this.#deadLetters.close();
    await this.http.stop();
    await this.#statusProducer?.disconnect().catch(() => undefined);
    await this.kafka.close();
    await this.gatewayHttp.close();
    await this.ops.stop();
    this.#kafkaConnected = false;
    this.#state = 'stopped';
    return drained;
  }
}
