/**
 * Conversions between admin API messages and the gateway's JSON (spec: Resources
 * and their fields). Reading is lenient: a field of another type than the spec
 * shows is left at its default, and `raw` still carries the item as received,
 * so ferry never breaks on what the gateway might send where its documentation
 * shows no field names (docs/gateway-api.md, Assumptions).
 */
import {
  fromJson,
  type JsonObject,
  type JsonValue,
  type MessageInitShape,
} from '@bufbuild/protobuf';
import { type Value, ValueSchema } from '@bufbuild/protobuf/wkt';
import { status } from '@grpc/grpc-js';
import { RpcError } from './admin-status.ts';
import type {
  GetBalanceResponseSchema,
  GetMessageStatusResponseSchema,
  HlrNetworkSchema,
  ListSendersResponseSchema,
  LookupHlrResponseSchema,
  ReplySchema,
} from './gen/ferry/admin/v1/admin_pb.ts';

/**
 * A client message id as the gateway takes it: a JSON number (spec: Operation object).
 * Unset stays unset, so the contract reports the field as missing.
 * @throws RpcError INVALID_ARGUMENT when the value is not exact as a JSON number (beyond 2^53-1).
 */
export function jsonInteger(value: bigint | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new RpcError(
      status.INVALID_ARGUMENT,
      `${field}: must be an integer of at most 2^53-1 (exact as a JSON number)`,
    );
  }
  return Number(value);
}

/** Item data from the contract module is parsed JSON; this names that fact for the type checker. */
export function asJson(value: unknown): JsonValue {
  return value as JsonValue;
}

export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Any JSON as a google.protobuf.Value (null when the gateway sent nothing). */
export function jsonToValue(value: unknown): Value {
  return fromJson(ValueSchema, value === undefined ? null : asJson(value));
}

/** A payload the spec shows as an object whose fields it does not name: kept as is; anything else is wrapped as `{ value }`. */
export function jsonToStruct(value: unknown): JsonObject {
  if (isJsonObject(value)) return value;
  return { value: value === undefined ? null : asJson(value) };
}

function text(value: unknown): string {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'bigint') return String(value);
  return '';
}

function num(value: unknown): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '' && Number.isFinite(Number(value))) {
    return Number(value);
  }
  return 0;
}

function unsigned(value: unknown): number {
  const n = num(value);
  return Number.isInteger(n) && n >= 0 && n <= 0xffff_ffff ? n : 0;
}

function bigUnsigned(value: unknown): bigint {
  const n = num(value);
  return Number.isSafeInteger(n) && n >= 0 ? BigInt(n) : 0n;
}

function field(object: unknown, name: string): unknown {
  return isJsonObject(object) ? object[name] : undefined;
}

/** spec: Balance record. */
export function balanceResponse(data: unknown): MessageInitShape<typeof GetBalanceResponseSchema> {
  return {
    amount: num(field(data, 'amount')),
    currency: text(field(data, 'currency')),
    raw: jsonToValue(data),
  };
}

/** spec: Sender record; the item data is an array of them. */
export function sendersResponse(data: unknown): MessageInitShape<typeof ListSendersResponseSchema> {
  const list = Array.isArray(data) ? data : [];
  return {
    senders: list.map((sender) => ({
      name: text(field(sender, 'name')),
      status: text(field(sender, 'status')),
    })),
    raw: jsonToValue(data),
  };
}

function hlrNetwork(network: unknown): MessageInitShape<typeof HlrNetworkSchema> | undefined {
  if (!isJsonObject(network)) return undefined;
  const country = network.country;
  return {
    name: text(network.name),
    prefix: unsigned(network.prefix),
    ...(isJsonObject(country)
      ? { country: { name: text(country.name), prefix: unsigned(country.prefix) } }
      : {}),
  };
}

/** spec: HLR result. */
export function hlrResponse(data: unknown): MessageInitShape<typeof LookupHlrResponseSchema> {
  const network = field(data, 'network');
  const origin = hlrNetwork(field(network, 'origin'));
  const ported = hlrNetwork(field(network, 'ported'));
  return {
    phone: bigUnsigned(field(data, 'phone')),
    status: text(field(data, 'status')),
    imsi: bigUnsigned(field(data, 'imsi')),
    mccmnc: unsigned(field(data, 'mccmnc')),
    ported: field(data, 'ported') === true,
    ...(origin ? { originNetwork: origin } : {}),
    ...(ported ? { portedNetwork: ported } : {}),
    raw: jsonToValue(data),
  };
}

function reply(element: unknown): MessageInitShape<typeof ReplySchema> {
  const message = field(element, 'message');
  const media = field(element, 'media');
  return {
    datetime: text(field(element, 'datetime')),
    ...(typeof message === 'string' ? { message } : {}),
    ...(isJsonObject(media)
      ? {
          media: {
            url: text(media.url),
            filename: text(media.filename),
            filesize: bigUnsigned(media.filesize),
          },
        }
      : {}),
  };
}

/** spec: Message status record, with Viber 2 Way `replies`. */
export function messageStatusResponse(
  data: unknown,
): MessageInitShape<typeof GetMessageStatusResponseSchema> {
  const replies = field(data, 'replies');
  return {
    id: text(field(data, 'id')),
    msgId: text(field(data, 'msg_id')),
    type: text(field(data, 'type')),
    status: text(field(data, 'status')),
    updated: text(field(data, 'updated')),
    replies: Array.isArray(replies) ? replies.map(reply) : [],
    raw: jsonToValue(data),
  };
}
