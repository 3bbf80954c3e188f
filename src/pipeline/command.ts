import { type OperationType, type Transport, validateOperation } from '../contract/index.ts';
import type { InboundRecord } from '../kafka/kafka-client.ts';

/** The header that overrides the default transport for one command (DESIGN: Kafka records). */
export const TRANSPORT_HEADER = 'ferry-transport';

/** A command that passed every contract rule and will be sent. */
export interface ValidCommand {
  readonly kind: 'valid';
  readonly record: InboundRecord;
  readonly transport: Transport;
  readonly type: OperationType;
  readonly id: unknown;
  /** The operation as it goes into the envelope: the record's own JSON text unless ferry added a field. */
  readonly json: string;
}

/** A command that is never sent; its result is a `validation` failure. */
export interface InvalidCommand {
  readonly kind: 'invalid';
  readonly record: InboundRecord;
  readonly transport: Transport;
  readonly type?: unknown;
  readonly id?: unknown;
  readonly error: string;
  /** Bounded label for metrics. */
  readonly rule: string;
  /** Not JSON or not an object: the record also goes to the dead-letter topic (DESIGN). */
  readonly unreadable: boolean;
}

export type Command = ValidCommand | InvalidCommand;

export interface CommandReaderOptions {
  readonly defaultTransport: Transport;
  /** Transports that have an endpoint configured. */
  readonly transports: ReadonlySet<Transport>;
  /** Adds fields to an operation before it is sent (hook injection); returns true when it changed it. */
  readonly prepare?: (operation: Record<string, unknown>) => boolean;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function invalid(
  record: InboundRecord,
  transport: Transport,
  error: string,
  rule: string,
  unreadable: boolean,
  operation?: Record<string, unknown>,
): InvalidCommand {
  const base = { kind: 'invalid' as const, record, transport, error, rule, unreadable };
  if (!operation) return base;
  return { ...base, type: operation.type, id: operation.id };
}

/**
 * Turns one Kafka record into a command: decoded, parsed, checked against the
 * contract. Never throws: anything wrong with the record becomes an InvalidCommand.
 */
export function readCommand(record: InboundRecord, options: CommandReaderOptions): Command {
  const header = record.headers[TRANSPORT_HEADER];
  let transport = options.defaultTransport;
  if (header !== undefined) {
    if (header !== 'sync' && header !== 'async') {
      return invalid(
        record,
        transport,
        `${TRANSPORT_HEADER}: must be sync or async`,
        'transport_header',
        false,
      );
    }
    transport = header;
  }
  if (record.value === null || record.value.length === 0) {
    return invalid(record, transport, 'the record has no value', 'not_json', true);
  }
  let text: string;
  let parsed: unknown;
  try {
    text = decoder.decode(record.value);
    parsed = JSON.parse(text);
  } catch {
    return invalid(record, transport, 'the record value is not UTF-8 JSON', 'not_json', true);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return invalid(record, transport, 'the record value is not a JSON object', 'not_object', true);
  }
  const operation = parsed as Record<string, unknown>;
  const checked = validateOperation(operation);
  if (!checked.ok) {
    return invalid(record, transport, checked.message, checked.rule, false, operation);
  }
  if (typeof operation.id === 'number' && Math.abs(operation.id) > Number.MAX_SAFE_INTEGER) {
    // Not a gateway rule: JSON parsers (ferry's too) lose the last digits of larger
    // numbers, so two commands could share an id and a status lookup find the wrong one.
    return invalid(
      record,
      transport,
      'id: must be at most 9007199254740991 (2^53 - 1); larger numbers lose digits when parsed',
      'range',
      false,
      operation,
    );
  }
  if (!options.transports.has(transport)) {
    return invalid(
      record,
      transport,
      `${TRANSPORT_HEADER}: no ${transport} endpoint is configured`,
      'transport_header',
      false,
      operation,
    );
  }
  const changed = options.prepare?.(operation) ?? false;
  return {
    kind: 'valid',
    record,
    transport,
    type: operation.type as OperationType,
    id: operation.id,
    json: changed ? JSON.stringify(operation) : text,
  };
}
