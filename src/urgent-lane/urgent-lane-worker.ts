/**
 * The urgent lane's thread: its own event loop, so an urgent command is read, batched,
 * sent and committed while the bulk lane's thread is busy decoding a fetch or encoding
 * results. It builds what the lane needs from the configuration (Kafka client, gateway
 * client, metrics registry, tracer) and answers the main thread's requests
 * (protocol.ts). Its log lines go to the main thread, which writes them where its own go.
 */
import { Writable } from 'node:stream';
import { parentPort, workerData } from 'node:worker_threads';
import { createGateway, createKafkaClient } from '../clients.ts';
import { secretValues } from '../config/config.ts';
import { readKafkaSecurity } from '../config/kafka-security.ts';
import { refusalError } from '../kafka/kafka-security.ts';
import { laneOptions } from '../lane-options.ts';
import { laneMetrics } from '../observability/lane-metrics.ts';
import { createLogger } from '../observability/logger.ts';
import { createMetrics } from '../observability/metrics.ts';
import { readTracingSettings, startTracing } from '../observability/tracing.ts';
import { Pipeline } from '../pipeline/pipeline.ts';
import { RetryAfterHold } from '../pipeline/retry-after-hold.ts';
import {
  type HoldMessage,
  type LaneEvent,
  type PostedRequest,
  serializeError,
  type UrgentLaneWorkerData,
  type WorkerMessage,
} from './protocol.ts';

/** How often the lane's state is looked at; it is posted only when it changed. */
const STATE_EVERY_MS = 200;

const port = parentPort;
if (!port) throw new Error('urgent-lane-worker.ts runs as a worker thread only');
const post = (message: WorkerMessage): void => port.postMessage(message);
const { config, logLevel } = workerData as UrgentLaneWorkerData;
const urgentTopic = config.FERRY_TOPIC_COMMANDS_URGENT;
if (!urgentTopic) throw new Error('the urgent lane needs FERRY_TOPIC_COMMANDS_URGENT');

const logger = createLogger({
  level: logLevel,
  secrets: secretValues(config),
  destination: new Writable({
    write(chunk: Buffer | string, _encoding, done) {
      post({ kind: 'log', line: chunk.toString() });
      done();
    },
  }),
});
// Without the process metrics: the main thread's registry has those, for the whole process.
const metrics = createMetrics(undefined, { processMetrics: false });
const tracing = await startTracing(readTracingSettings(process.env), logger);
const kafka = createKafkaClient(config, { logger, metrics, security: readKafkaSecurity(config) });
const gateway = createGateway(config, metrics, config.FERRY_CONCURRENCY_URGENT);
const retryAfterHold = new RetryAfterHold(config.FERRY_RETRY_AFTER_MAX_MS);
retryAfterHold.onLengthened((remainingMs) => post({ kind: 'hold', remainingMs }));
const pipeline = new Pipeline(
  laneOptions(
    config,
    {
      kafka,
      gateway: gateway.client,
      logger,
      metrics: laneMetrics(metrics, 'urgent'),
      retryAfterHold,
      tracer: tracing.tracer,
      onCrash: (crash) =>
        post({
          kind: 'crash',
          error: serializeError(refusalError(crash, 'the urgent lane stopped') ?? crash),
        }),
    },
    urgentTopic,
  ),
);

let lastState = '';
/** The id of the last request taken, posted with each state. */
let handled = 0;
function postState(): void {
  const state = pipeline.state();
  const event: LaneEvent = {
    kind: 'state',
    state,
    running: pipeline.running,
    takenOver: pipeline.takenOver,
    handled,
  };
  const text = JSON.stringify(event);
  if (text === lastState) return;
  lastState = text;
  post(event);
}
const stateTimer = setInterval(postState, STATE_EVERY_MS);

async function answer(request: PostedRequest): Promise<unknown> {
  switch (request.op) {
    case 'start':
      return await pipeline.start();
    case 'stop': {
      const drained = await pipeline.stop(request.graceMs);
      clearInterval(stateTimer);
      await kafka.close();
      await gateway.http.close();
      await tracing.stop();
      return drained;
    }
    case 'setDesired':
      return pipeline.setDesired(request.desired);
    case 'metrics':
      return await metrics.registry.getMetricsAsJSON();
  }
}

port.on('message', (message: PostedRequest | HoldMessage) => {
  if (message.op === 'hold') {
    retryAfterHold.mirror(message.remainingMs);
    return;
  }
  handled = message.id;
  answer(message).then(
    (value) => {
      if (message.op !== 'stop') postState();
      post({ kind: 'answer', id: message.id, value });
    },
    (error: unknown) =>
      post({
        kind: 'failed',
        id: message.id,
        error: serializeError(refusalError(error, 'the urgent lane could not start') ?? error),
      }),
  );
});
