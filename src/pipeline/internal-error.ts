/** A record ferry failed on (reading it, or building its output): counted and logged. */
import type { InboundRecord } from '../kafka/kafka-port.ts';
import type { Logger } from '../observability/logger.ts';
import type { FerryMetrics } from '../observability/metrics.ts';
import { errorText } from './output-records.ts';

export type InternalErrorStep = 'read' | 'output';

/** The record already has its internal-error result and dead letter; this tells an operator. */
export function internalErrorReporter(
  metrics: Pick<FerryMetrics, 'internalErrors'>,
  log: Logger,
): (step: InternalErrorStep, record: InboundRecord, error: unknown) => void {
  return (step, record, error) => {
    metrics.internalErrors.inc({ step });
    log.error(
      { step, partition: record.partition, offset: record.offset, err: errorText(error) },
      'internal error on a record: it gets an internal-error result and a dead letter',
    );
  };
}
