import { type OperationType, type Transport, validateOperation } from '../contract/index.ts';
import { appendJsonFields } from '../json/append-fields.ts';
import { jsonNestingDepth } from '../json/safe-json.ts';
import type { InboundRecord } from '../kafka/kafka-port.ts';
import { type Deadline, deadlineOf } from './command-deadline.ts';
import { ID_RANGE_ERROR, ID_RANGE_RULE, idAsWritten, idOutOfRange } from './command-id.ts';

/** The header that overrides the default transport (FERRY_TRANSPORT) for one command. */
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
  /** After this it is never sent (command-deadline.ts); none when undefined. */
  readonly deadline?: Deadline;
}

/** A command that is never sent; its result is a `validation` failure. */
export interface InvalidCommand {
  readonly kind: 'invalid';
  readonly record: InboundRecord;
  readonly transport: Transport;
  readonly type?: unknown;
  /**
   * As the record wrote it: a number JSON.parse would round is a `JSON.rawJSON` value that
   * JSON.stringify writes with every digit (String() of it throws; only encode it).
   */
  readonly id?: unknown;
  readonly error: string;
  /** Bounded label for metrics. */
  readonly rule: string;
  /** Path of the offending field (`pipeline[0]`, `sms.signature`) when one field broke the rule. */
  readonly field?: string;
  /** Not JSON or not an object: besides its result, the record goes to the dead-letter topic, since no one can fix it by reading the result alone. */
  readonly unreadable: boolean;
}

export type Command = ValidCommand | InvalidCommand;

/** FERRY_COMMAND_MAX_BYTES default: the broker's default record limit, so no sane command reaches it. */
export const DEFAULT_COMMAND_MAX_BYTES = 1024 * 1024;
/**
 * FERRY_COMMAND_MAX_DEPTH default. The deepest valid operation nests 3 levels (the operation,
 * `viber_carousel`, a carousel item; `pipeline` channel objects are 2). Only `pipeline`'s
 * `whatsapp` and `rcs` objects are opaque to the contract; 32 leaves them ample room, while
 * anything deeper is refused before it is parsed, so neither the parser nor any later
 * JSON.stringify of its fields can run out of stack.
 */
export const DEFAULT_COMMAND_MAX_DEPTH = 32;

/**
 * Adds fields to an operation before it is sent (hook injection), knowing the command's
 * transport and record headers; returns true when it added any.
 */
export type PrepareOperation = (
  operation: Record<string, unknown>,
  context: {
    readonly transport: Transport;
    readonly headers: Readonly<Record<string, string>>;
    readonly partition?: number | undefined;
  },
) => boolean;

export interface CommandReaderOptions {
  readonly defaultTransport: Transport;
  /** Transports that have an endpoint configured. */
  readonly transports: ReadonlySet<Transport>;
  /**
   * Adds fields to an operation before it is sent (hook injection); returns true when it
   * added any. The added fields are spliced into the record's own text; it must not change
   * the fields the operation already has.
   */
  readonly prepare?: PrepareOperation;
  /** Record values longer than this are refused unparsed (FERRY_COMMAND_MAX_BYTES). */
  readonly maxBytes?: number;
  /** Record values nesting objects and arrays deeper than this are refused unparsed (FERRY_COMMAND_MAX_DEPTH). */
  readonly maxDepth?: number;
  /** Deadlines by operation type for records without the header (FERRY_EXPIRE_AFTER_MS). */
  readonly expireAfterMs?: ReadonlyMap<string, number>;
}

const decoder = new TextDecoder('utf-8', { fatal: true });

function invalid(
  record: InboundRecord,
  transport: Transport,
  error: string,
  rule: string,
  unreadable: boolean,
  read?: { readonly type: unknown; readonly id: unknown },
  field?: string,
): InvalidCommand {
  const base = {
    kind: 'invalid' as const,
    record,
    transport,
    error,
    rule,
    unreadable,
    ...(field ? { field } : {}),
  };
  if (!read) return base;
  return { ...base, type: read.type, id: read.id };
}

/**
 * Turns one Kafka record into a command: decoded, parsed, checked against the
 * contract. Never throws: anything wrong with the record becomes an InvalidCommand.
 */
export function readCommand(record: InboundRecord, options: CommandReaderOptions): Command {
  const header = record.headers[TRANSPORT_HEADER];
  let transport = options.defaultTransport;
  const maxBytes = options.maxBytes ?? DEFAULT_COMMAND_MAX_BYTES;
  if (record.oversized !== undefined) {
    const { recordBytes, valueBytes } = record.oversized;
    // Never held whole: its value was passed over while its batch was decompressed.
    return invalid(
      record,
      header === 'sync' || header === 'async' ? header : transport,
      `the record value is ${valueBytes} bytes once decompressed (the record ${recordBytes}); the limit is ${maxBytes} (FERRY_COMMAND_MAX_BYTES)`,
      'too_large',
      true,
    );
  }
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
  if (record.value.length > maxBytes) {
    return invalid(
      record,
      transport,
      `the record value is ${record.value.length} bytes; the limit is ${maxBytes} (FERRY_COMMAND_MAX_BYTES)`,
      'too_large',
      true,
    );
  }
  let text: string;
  try {
    text = decoder.decode(record.value);
  } catch {
    return invalid(record, transport, 'the record value is not UTF-8 JSON', 'not_json', true);
  }
  const maxDepth = options.maxDepth ?? DEFAULT_COMMAND_MAX_DEPTH;
  // A linear scan, no recursion: a 100,000-deep value is refused before anything walks it.
  if (jsonNestingDepth(text, maxDepth) > maxDepth) {
    return invalid(
      record,
      transport,
      `the record value nests objects and arrays deeper than ${maxDepth} levels (FERRY_COMMAND_MAX_DEPTH)`,
      'too_deep',
      true,
    );
  }
  // Plain JSON.parse, not secure-json-parse: `__proto__` and `constructor` keys become own
  // data properties (no prototype is touched), the contract only reads the fields it knows,
  // and the text is sent as it came. Commands carrying such keys beside valid fields were
  // always sent; refusing them now would change what a valid command is.
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return invalid(record, transport, 'the record value is not UTF-8 JSON', 'not_json', true);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    return invalid(record, transport, 'the record value is not a JSON object', 'not_object', true);
  }
  const operation = parsed as Record<string, unknown>;
  // What a refusal's result repeats: the id as written, not as JSON.parse rounded it.
  const read = { type: operation.type, id: idAsWritten(operation.id, text) };
  const checked = validateOperation(operation);
  if (!checked.ok) {
    return invalid(record, transport, checked.message, checked.rule, false, read, checked.path);
  }
  if (idOutOfRange(operation.id)) {
    // Not a gateway rule: JSON parsers (ferry's too) lose the last digits of larger
    // numbers, so two commands could share an id and a status lookup find the wrong one.
    return invalid(record, transport, ID_RANGE_ERROR, ID_RANGE_RULE, false, read, 'id');
  }
  if (!options.transports.has(transport)) {
    return invalid(
      record,
      transport,
      `${TRANSPORT_HEADER}: no ${transport} endpoint is configured`,
      'transport_header',
      false,
      read,
    );
  }
  const type = operation.type as OperationType;
  const deadline = deadlineOf(record.headers, record.timestamp, type, options.expireAfterMs);
  if (deadline && 'error' in deadline) {
    return invalid(record, transport, deadline.error, 'expires_header', false, read);
  }
  return {
    kind: 'valid',
    record,
    transport,
    type,
    id: operation.id,
    ...(deadline ? { deadline } : {}),
    json: options.prepare
      ? prepared(text, operation, (op) =>
          (options.prepare as PrepareOperation)(op, {
            transport,
            headers: record.headers,
            partition: record.partition,
          }),
        )
      : text,
  };
}

/**
 * The text to send after `prepare`: the record's own text with the fields `prepare` added
 * spliced in. Nothing else is encoded again, so the fields ferry does not touch reach the
 * gateway byte for byte as the producer wrote them.
 */
function prepared(
  text: string,
  operation: Record<string, unknown>,
  prepare: (operation: Record<string, unknown>) => boolean,
): string {
  const before = new Set(Object.keys(operation));
  if (!prepare(operation)) return text;
  const added: [string, unknown][] = [];
  for (const key of Object.keys(operation)) {
    if (!before.has(key)) added.push([key, operation[key]]);
  }
  // `prepare` said it changed something but added nothing: it changed a field in place,
  // which only encoding the whole operation can carry. The depth limit keeps that safe.
  if (added.length === 0) return JSON.stringify(operation);
  return appendJsonFields(text, added);
}
