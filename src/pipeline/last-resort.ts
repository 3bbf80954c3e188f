/**
 * The last line of defence of the per-record path: whatever goes wrong while reading one
 * record (a bug, or input nobody foresaw) stays with that record. It becomes an invalid
 * command with rule `internal`, so it gets an `internal error: …` result and a dead letter,
 * and the consume loop, and every replica that would read the record next, keeps going.
 */
import type { InboundRecord } from '../kafka/kafka-port.ts';
import { type Command, type CommandReaderOptions, readCommand } from './command.ts';
import { errorText } from './output-records.ts';
import { INTERNAL_ERROR_PREFIX, INTERNAL_RULE } from './result.ts';

/** readCommand that never throws; `onInternalError` hears of what it caught (its own throws are ignored). */
export function readCommandGuarded(
  record: InboundRecord,
  options: CommandReaderOptions,
  onInternalError: (record: InboundRecord, error: unknown) => void,
  read: typeof readCommand = readCommand,
): Command {
  try {
    return read(record, options);
  } catch (error: unknown) {
    try {
      onInternalError(record, error);
    } catch {
      // Reporting must not take the record's result with it.
    }
    return {
      kind: 'invalid',
      record,
      transport: options.defaultTransport,
      error: `${INTERNAL_ERROR_PREFIX}${errorText(error)}`,
      rule: INTERNAL_RULE,
      unreadable: true,
    };
  }
}
