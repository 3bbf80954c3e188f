/**
 * ferryctl's flags, their parsing, and the one error that means wrong usage (exit 2):
 * shared by the command modules so each parses its arguments the same way.
 */
import type { parseArgs } from 'node:util';
import { type DescMessage, type JsonObject, type MessageShape, toJson } from '@bufbuild/protobuf';

/** A wrong invocation: exit code 2. */
export class UsageError extends Error {}

/** Where ferryctl writes; the tests pass their own. */
export interface CliIo {
  readonly out: (line: string) => void;
  readonly err: (line: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
}

export const options = {
  address: { type: 'string' },
  token: { type: 'string' },
  tls: { type: 'boolean' },
  'ca-file': { type: 'string' },
  'cert-file': { type: 'string' },
  'key-file': { type: 'string' },
  brokers: { type: 'string' },
  'commands-topic': { type: 'string' },
  'results-topic': { type: 'string' },
  json: { type: 'boolean' },
  reason: { type: 'string' },
  'timeout-ms': { type: 'string' },
  id: { type: 'string' },
  phone: { type: 'string' },
  text: { type: 'string' },
  sender: { type: 'string' },
  name: { type: 'string' },
  fields: { type: 'string' },
  limit: { type: 'string' },
  'error-contains': { type: 'string' },
  'include-in-doubt': { type: 'boolean' },
  'in-doubt': { type: 'boolean' },
  'not-in-doubt': { type: 'boolean' },
  since: { type: 'string' },
  until: { type: 'string' },
  offsets: { type: 'string' },
  values: { type: 'boolean' },
  'dry-run': { type: 'boolean' },
  type: { type: 'string' },
  version: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

export type Flags = ReturnType<
  typeof parseArgs<{ options: typeof options; allowPositionals: true }>
>['values'];

export function integerFlag(value: string | undefined, name: string): bigint | undefined {
  if (value === undefined) return undefined;
  if (!/^\d+$/.test(value))
    throw new UsageError(`${name} must be a non-negative integer, got "${value}"`);
  return BigInt(value);
}

export function numberFlag(value: string | undefined, name: string, fallback: number): number {
  const parsed = integerFlag(value, name);
  return parsed === undefined ? fallback : Number(parsed);
}

/** An ISO 8601 time (`2026-11-23T19:00:00Z`) as ms since the epoch. */
export function timeFlag(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) {
    throw new UsageError(`${name} must be an ISO 8601 time such as 2026-11-23T19:00:00Z`);
  }
  return ms;
}

/** A JSON object flag (`--fields '{"a":1}'`). */
export function objectFlag(value: string | undefined, name: string): JsonObject | undefined {
  if (value === undefined) return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new UsageError(`${name} must be a JSON object`);
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new UsageError(`${name} must be a JSON object`);
  }
  return parsed as JsonObject;
}

/** Prints a response as proto3 JSON (`--json`) or as the text `human` makes of it. */
export function printer(io: CliIo, json: boolean) {
  return <D extends DescMessage>(
    schema: D,
    message: MessageShape<D>,
    human: (m: MessageShape<D>) => string,
  ) => {
    io.out(json ? JSON.stringify(toJson(schema, message)) : human(message));
  };
}
