/**
 * Conversions between the dead-letter messages of the admin API and the
 * selection, listing and replay types of dead-letter-filter.ts and dead-letter-replay.ts.
 */
import type { MessageInitShape } from '@bufbuild/protobuf';
import { type Timestamp, timestampFromMs, timestampMs } from '@bufbuild/protobuf/wkt';
import { status } from '@grpc/grpc-js';
import { RpcError } from './admin-status.ts';
import {
  commandType,
  DELIVERY_HEADER,
  type DeadLetter,
  type DeadLetterPosition,
  type DeadLetterSelection,
  ERROR_HEADER,
  isTruncated,
} from './dead-letter-filter.ts';
import type {
  DeadLetterPosition as DeadLetterPositionMessage,
  DeadLetterSchema,
} from './gen/ferry/admin/v1/admin_pb.ts';

/** The request fields every dead-letter RPC selects with. */
export interface SelectionFields {
  readonly errorContains?: string | undefined;
  readonly type?: string | undefined;
  readonly since?: Timestamp | undefined;
  readonly until?: Timestamp | undefined;
  readonly positions: readonly DeadLetterPositionMessage[];
}

function position(message: DeadLetterPositionMessage, index: number): DeadLetterPosition {
  if (message.offset < 0n || message.offset > BigInt(Number.MAX_SAFE_INTEGER)) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `positions[${index}].offset: must be between 0 and 2^53-1`,
    );
  }
  if (message.partition < 0) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `positions[${index}].partition: must not be negative`,
    );
  }
  return { partition: message.partition, offset: Number(message.offset) };
}

/**
 * The selection a request asks for; empty texts count as unset.
 * @throws RpcError INVALID_ARGUMENT for a negative position or `since` not before `until`.
 */
export function selectionOf(fields: SelectionFields): DeadLetterSelection {
  const sinceMs = fields.since ? timestampMs(fields.since) : undefined;
  const untilMs = fields.until ? timestampMs(fields.until) : undefined;
  if (sinceMs !== undefined && untilMs !== undefined && sinceMs >= untilMs) {
    throw new RpcError(status.INVALID_ARGUMENT, 'since: must be before until');
  }
  return {
    ...(fields.errorContains ? { errorContains: fields.errorContains } : {}),
    ...(fields.type ? { type: fields.type } : {}),
    ...(sinceMs === undefined ? {} : { sinceMs }),
    ...(untilMs === undefined ? {} : { untilMs }),
    ...(fields.positions.length > 0 ? { positions: fields.positions.map(position) } : {}),
  };
}

/** A dead letter as the API shows it; the command itself only when `withValue`. */
export function deadLetterMessage(
  record: DeadLetter,
  replayed: boolean,
  withValue: boolean,
): MessageInitShape<typeof DeadLetterSchema> {
  return {
    position: { partition: record.partition, offset: BigInt(record.offset) },
    ...(Number.isFinite(record.timestamp) ? { time: timestampFromMs(record.timestamp) } : {}),
    key: record.key?.toString('utf8') ?? '',
    error: record.headers[ERROR_HEADER] ?? '',
    delivery: record.headers[DELIVERY_HEADER] ?? '',
    type: commandType(record.value) ?? '',
    truncated: isTruncated(record),
    replayed,
    headers: { ...record.headers },
    ...(withValue ? { value: record.value?.toString('utf8') ?? '' } : {}),
  };
}
