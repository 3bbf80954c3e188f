/** Small adapters between kafkajs and ferry, shared by the modules of src/kafka/. */
import type { Logger } from '../observability/logger.ts';
import { type IHeaders, type LogEntry, logLevel } from './kafkajs.ts';

/** Record headers as strings (kafkajs gives Buffers, strings or arrays of them). */
export function headersOf(headers: IHeaders | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    const first: unknown = Array.isArray(value) ? value[0] : value;
    out[name] = Buffer.isBuffer(first) ? first.toString('utf8') : String(first ?? '');
  }
  return out;
}

// kafkajs warns about bounded retries on every idempotent producer. ferry's results go
// through transactions (an aborted one leaves nothing behind) and callers of the status
// producer retry on failure, so the warning says nothing actionable here.
const quietWarnings = new Set([
  'Limiting retries for the idempotent producer may invalidate EoS guarantees',
]);

// A transaction begun while the broker still writes the previous one's markers is
// answered CONCURRENT_TRANSACTIONS and retried after a few milliseconds (TRANSACTION_RETRY
// in kafka-client.ts): expected on every busy partition, and kafkajs logs it as an error.
const expectedErrors = ['another concurrent operation on the same transaction'];

/** Routes kafkajs log lines to a pino child of `logger`; kafkajs INFO goes to debug. */
export function kafkaLogCreator(logger: Logger, component: string) {
  const child = logger.child({ component });
  return () =>
    ({ level, log }: LogEntry) => {
      const { message, timestamp: _timestamp, logger: _logger, ...fields } = log;
      // The connection logs the broker's answer ("Response AddPartitionsToTxn", with the
      // error text in `error`), the producer its retry: both are expected here.
      const text = typeof fields.error === 'string' ? `${message} ${fields.error}` : message;
      if (
        quietWarnings.has(message) ||
        expectedErrors.some((expected) => text.includes(expected))
      ) {
        child.debug(fields, message);
      } else if (level === logLevel.ERROR) child.error(fields, message);
      else if (level === logLevel.WARN) child.warn(fields, message);
      else if (level === logLevel.INFO) child.debug(fields, message);
      else child.trace(fields, message);
    };
}
