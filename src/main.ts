/**
 * Composition root: configuration, logger, metrics, the daemon, and the process
 * signals. `npm start` runs this file on Node 24.
 */
import { readConfig, redactedConfig, secretValues } from './config/config.ts';
import { Daemon } from './daemon.ts';
import { ConfigError, FerryError } from './errors.ts';
import { EXIT_CODES, exitCodeOf } from './exit-codes.ts';
import { refusalError } from './kafka/kafka-security.ts';
import { createLogger } from './observability/logger.ts';
import { createMetrics } from './observability/metrics.ts';
import { readTracingSettings, startTracing } from './observability/tracing.ts';
import { FERRY_VERSION } from './version.ts';

// Before the configuration is read, so it answers without any FERRY_* variable set.
if (process.argv.includes('--version')) {
  process.stdout.write(`ferry ${FERRY_VERSION}\n`);
  process.exit(0);
}

function loadConfig() {
  try {
    return { config: readConfig(process.env), tracingSettings: readTracingSettings(process.env) };
  } catch (error: unknown) {
    if (error instanceof ConfigError) {
      process.stderr.write(`ferry: configuration error: ${error.message}\n`);
      process.exit(EXIT_CODES.failure);
    }
    throw error;
  }
}

/**
 * A Kafka refusal (credentials, TLS, an ACL), even wrapped, as the FerryError that names
 * it, so the exit code and the one fatal line say what to fix; anything else unchanged.
 */
function classified(error: unknown): unknown {
  return refusalError(error, 'the Kafka client stopped') ?? error;
}

const { config, tracingSettings } = loadConfig();
const logger = createLogger({ level: config.FERRY_LOG_LEVEL, secrets: secretValues(config) });
logger.info({ config: redactedConfig(config) }, 'configuration loaded');
// Before the daemon, so the first command read is traced; off, this imports nothing.
const tracing = await startTracing(tracingSettings, logger);

let exiting = false;

function createDaemon(): Daemon {
  try {
    return new Daemon({
      config,
      logger,
      metrics: createMetrics(),
      tracer: tracing.tracer,
      onFatal: (crash) => {
        const error = classified(crash);
        const exitCode = exitCodeOf(error, EXIT_CODES.consumerCrashed);
        if (exitCode !== EXIT_CODES.consumerCrashed && error instanceof FerryError) {
          logger.fatal({ exitCode, reason: error.code }, `ferry stopped: ${error.message}`);
        } else {
          logger.fatal(
            { exitCode, err: crash.message },
            'the Kafka consumer crashed; exiting so the supervisor restarts ferry',
          );
        }
        process.exit(exitCode);
      },
    });
  } catch (error: unknown) {
    // Reading the Kafka TLS files happens here: a missing one is a configuration error.
    if (error instanceof ConfigError) {
      logger.fatal({ exitCode: EXIT_CODES.failure }, `configuration error: ${error.message}`);
      process.exit(EXIT_CODES.failure);
    }
    throw error;
  }
}

const daemon = createDaemon();

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
    logger.info({ drained }, 'stopped');
    // After the pipeline: the spans of the last committed batches are exported too.
    await tracing.stop();
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
} catch (failure: unknown) {
  const error = classified(failure);
  const exitCode = exitCodeOf(error, EXIT_CODES.failure);
  if (exitCode !== EXIT_CODES.failure && error instanceof FerryError) {
    // One line that names the cause: what was refused and what to check.
    logger.fatal({ exitCode, reason: error.code }, `ferry could not start: ${error.message}`);
  } else {
    logger.fatal(
      { exitCode, err: error instanceof Error ? error.message : String(error) },
      'ferry could not start',
    );
  }
  await daemon.stop().catch(() => undefined);
  await tracing.stop();
  process.exit(exitCode);
}
