/**
 * Composition root: configuration, logger, metrics, the daemon, and the process
 * signals. `npm start` runs this file on Node 24.
 */
import { readConfig, redactedConfig, secretValues } from './config/config.ts';
import { Daemon } from './daemon.ts';
import { ConfigError } from './errors.ts';
import { createLogger } from './observability/logger.ts';
import { createMetrics } from './observability/metrics.ts';
import { readTracingSettings, startTracing } from './observability/tracing.ts';

function loadConfig() {
  try {
    return { config: readConfig(process.env), tracingSettings: readTracingSettings(process.env) };
  } catch (error: unknown) {
    if (error instanceof ConfigError) {
      process.stderr.write(`ferry: configuration error: ${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}

const { config, tracingSettings } = loadConfig();
const logger = createLogger({ level: config.FERRY_LOG_LEVEL, secrets: secretValues(config) });
logger.info({ config: redactedConfig(config) }, 'configuration loaded');
// Before the daemon, so the first command read is traced; off, this imports nothing.
const tracing = await startTracing(tracingSettings, logger);

let exiting = false;
const daemon = new Daemon({
  config,
  logger,
  metrics: createMetrics(),
  tracer: tracing.tracer,
  onFatal: (error) => {
    logger.fatal(
      { err: error.message },
      'the Kafka consumer crashed; exiting so the supervisor restarts ferry',
    );
    process.exit(70);
  },
});

async function shutdown(signal: NodeJS.Signals): Promise<void> {
  if (exiting) return;
  exiting = true;
  logger.info({ signal }, 'stopping');
  // Past the grace time plus a margin for Kafka and HTTP, exit regardless.
  const force = setTimeout(() => {
    logger.error('shutdown took too long; exiting');
    process.exit(1);
  }, config.FERRY_SHUTDOWN_GRACE_MS + 15_000);
  force.unref();
  try {
    const drained = await daemon.stop();
    // After the pipeline: the spans of the last committed batches are exported too.
    await tracing.stop();
    logger.info({ drained }, 'stopped');
    process.exit(drained ? 0 : 1);
  } catch (error: unknown) {
    logger.error({ err: error instanceof Error ? error.message : String(error) }, 'stop failed');
    process.exit(1);
  }
}

process.on('SIGTERM', (signal) => void shutdown(signal));
process.on('SIGINT', (signal) => void shutdown(signal));

try {
  await daemon.start();
} catch (error: unknown) {
  logger.fatal(
    { err: error instanceof Error ? error.message : String(error) },
    'ferry could not start',
  );
  await daemon.stop().catch(() => undefined);
  await tracing.stop();
  process.exit(1);
}
