/**
 * Bad input for the same run (fuzzing): random bytes, truncated JSON,
 * `__proto__` keys, 100,000-deep nesting, ~900 KB values, numbers beyond 2^53, and
 * every field of every operation type with every wrong JSON type. Each record must
 * get exactly one result (and a dead letter when it is not a JSON object) while
 * ferry keeps running and the well-formed commands are not affected.
 */
import { jsonNestingDepth } from '../../src/json/safe-json.ts';
import {
  DEFAULT_COMMAND_MAX_BYTES,
  DEFAULT_COMMAND_MAX_DEPTH,
} from '../../src/pipeline/command.ts';
import { isReconcilable } from '../../src/pipeline/send-intent.ts';
import { FIXTURE_PHONE, validOperations } from '../fixtures/operations.ts';
import type { PlannedRecord } from './command-mix.ts';
import type { SeededRandom } from './seeded-random.ts';

/** First id of fuzz cases, far from the well-formed commands. */
export const FUZZ_ID_BASE = 900_000_000;

export interface BadInputOptions {
  /** Random-byte records. */
  readonly randomBytes: number;
  /** Truncated JSON records. */
  readonly truncated: number;
  /** Depth of the deeply nested records (0: none). */
  readonly nestingDepth: number;
  /** Size of the large values in bytes (0: none); must stay under the topic's 1 MB record limit. */
  readonly largeValueBytes: number;
  /** Wrong JSON values tried per field: all of them, or one per field. */
  readonly wrongTypes: 'all' | 'one';
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/**
 * What ferry must do with a value: unreadable ones (over the size or nesting limit, not UTF-8
 * JSON, not an object) are also dead-lettered (README, Topics and records: Dead letter).
 */
export function isUnreadable(value: Buffer | null): boolean {
  if (value === null || value.length === 0) return true;
  if (value.length > DEFAULT_COMMAND_MAX_BYTES) return true;
  try {
    const text = decoder.decode(value);
    if (jsonNestingDepth(text, DEFAULT_COMMAND_MAX_DEPTH) > DEFAULT_COMMAND_MAX_DEPTH) return true;
    const parsed: unknown = JSON.parse(text);
    return typeof parsed !== 'object' || parsed === null || Array.isArray(parsed);
  } catch {
    return true;
  }
}

const wrongValues: readonly (readonly [string, string])[] = [
  ['null', 'null'],
  ['true', 'true'],
  ['zero', '0'],
  ['negative', '-1'],
  ['fraction', '1.5'],
  ['empty string', '""'],
  ['string', '"wrong"'],
  ['empty array', '[]'],
  ['array', '[1,"a",null]'],
  ['empty object', '{}'],
  ['object', '{"a":1}'],
];

function jsonKind(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value;
}

function kindOfJson(text: string): string {
  return jsonKind(JSON.parse(text));
}

/** Builds every bad-input record; `nextId` hands out unique ids from FUZZ_ID_BASE. */
export function buildBadInputs(options: BadInputOptions, random: SeededRandom): PlannedRecord[] {
  const records: PlannedRecord[] = [];
  let nextId = FUZZ_ID_BASE;
  const sms = (id: number, extra: Record<string, unknown> = {}) => ({
    type: 'sms',
    id,
    phone: FIXTURE_PHONE,
    sms_message: `fuzz ${id}`,
    sms_signature: 'FERRY',
    ...extra,
  });
  const add = (
    label: string,
    value: Buffer | null,
    reconcilableId?: string,
    headers?: Record<string, string>,
  ): void => {
    records.push({
      key: `fuzz-${records.length}`,
      value,
      label,
      expectDeadLetter: isUnreadable(value),
      ...(reconcilableId === undefined ? {} : { reconcilableId }),
      ...(headers ? { headers } : {}),
    });
  };
  const text = (value: string) => Buffer.from(value, 'utf8');

  for (let i = 0; i < options.randomBytes; i += 1) {
    add('random bytes', random.bytes(random.int(1, 4096)));
  }
  add('empty value', Buffer.alloc(0));
  add('tombstone (null value)', null);
  add(
    'invalid UTF-8 inside a JSON string',
    Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d]),
  );
  add('JSON string, not an object', text('"sms"'));
  add('JSON array, not an object', text('[{"type":"sms"}]'));
  add('JSON number', text('42'));
  add('JSON null', text('null'));
  add('unknown transport header', text(JSON.stringify(sms(nextId++))), undefined, {
    'ferry-transport': 'carrier-pigeon',
  });

  for (let i = 0; i < options.truncated; i += 1) {
    const full = JSON.stringify(sms(nextId++));
    add('truncated JSON', text(full.slice(0, random.int(1, full.length - 1))));
  }

  // `__proto__` as an own JSON key must neither pollute prototypes nor change the operation.
  add('__proto__ key', text(`{"__proto__":{"type":"sms","id":${nextId++}}}`));
  {
    const id = nextId++;
    add(
      '__proto__ key beside a valid sms',
      text(JSON.stringify(sms(id)).replace('{', '{"__proto__":{"polluted":true},')),
      String(id),
    );
  }
  add(
    'constructor.prototype keys',
    text(`{"type":"sms","id":${nextId++},"constructor":{"prototype":{"polluted":true}}}`),
  );
  add('__proto__ as the type', text(`{"type":"__proto__","id":${nextId++}}`));

  if (options.nestingDepth > 0) {
    const depth = options.nestingDepth;
    add('deep array nesting', text(`${'['.repeat(depth)}${']'.repeat(depth)}`));
    add('deep object nesting', text(`${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`));
    add(
      'deep nesting in sms_message',
      text(
        JSON.stringify(sms(nextId++)).replace(
          /"sms_message":"[^"]*"/,
          `"sms_message":${'['.repeat(depth)}${']'.repeat(depth)}`,
        ),
      ),
    );
    // Refused unread like any record past FERRY_COMMAND_MAX_DEPTH, so never sent.
    add(
      'deep nesting in an unknown field of a valid sms',
      text(
        JSON.stringify(sms(nextId++)).replace(
          '{',
          `{"extra":${'['.repeat(depth)}${']'.repeat(depth)},`,
        ),
      ),
    );
    add('unclosed deep nesting', text('['.repeat(depth)));
  }

  if (options.largeValueBytes > 0) {
    const size = options.largeValueBytes;
    add('large random bytes', random.bytes(size));
    add('large JSON string', text(JSON.stringify('x'.repeat(size))));
    const id = nextId++;
    add(
      'large sms_message',
      text(JSON.stringify(sms(id, { sms_message: 'y'.repeat(size) }))),
      String(id),
    );
    add('large unknown field', text(JSON.stringify(sms(nextId++, { extra: 'z'.repeat(size) }))));
    add(
      'large phone number',
      text(JSON.stringify(sms(nextId++)).replace(/"phone":\d+/, `"phone":${'9'.repeat(size)}`)),
    );
  }

  // Numbers beyond 2^53. Ids that are exact doubles stay distinct; digits past double
  // precision are rounded by every JSON.parse on the way (ferry's and the gateway's).
  {
    const exact = 2n ** 60n + BigInt(nextId++) * 4096n;
    add(
      'id beyond 2^53 (exact double)',
      text(JSON.stringify(sms(0)).replace('"id":0', `"id":${exact}`)),
      String(Number(exact)),
    );
  }
  add(
    'id 1e400 (Infinity once parsed)',
    text(JSON.stringify(sms(0)).replace('"id":0', '"id":1e400')),
  );
  add('id -0', text(JSON.stringify(sms(0)).replace('"id":0', '"id":-0')));
  add(
    'phone beyond 2^53',
    text(
      JSON.stringify(sms(nextId++)).replace(
        /"phone":\d+/,
        '"phone":123456789012345678901234567890',
      ),
    ),
  );
  add(
    'lifetime 1e308',
    text(
      JSON.stringify(sms(nextId++, { sms_lifetime: 0 })).replace(
        '"sms_lifetime":0',
        '"sms_lifetime":1e308',
      ),
    ),
  );

  // Every field of every operation type, with every JSON type it does not have.
  for (const [type, valid] of Object.entries(validOperations)) {
    for (const [field, original] of Object.entries(valid)) {
      const candidates = wrongValues.filter(([, json]) => kindOfJson(json) !== jsonKind(original));
      const chosen =
        options.wrongTypes === 'all'
          ? candidates
          : candidates.length > 0
            ? [random.pick(candidates)]
            : [];
      for (const [name, json] of chosen) {
        const id = nextId++;
        const operation: Record<string, unknown> = { ...structuredClone(valid) };
        if ('id' in operation && field !== 'id' && typeof operation.id === 'number')
          operation.id = id;
        // A unique marker replaces the field, then the wrong JSON text replaces the marker.
        const marker = `@@wrong-${id}@@`;
        operation[field] = marker;
        let body = JSON.stringify(operation).replace(`"${marker}"`, json);
        // A wrong number in `id` stays unique where it can (zero cannot: the verifier skips shared ids).
        if (field === 'id' && (name === 'negative' || name === 'fraction')) {
          body = JSON.stringify(operation).replace(
            `"${marker}"`,
            name === 'fraction' ? `${id}.5` : `-${id}`,
          );
        }
        const parsedId: unknown = (JSON.parse(body) as Record<string, unknown>).id;
        const reconcilable = isReconcilable(type as Parameters<typeof isReconcilable>[0], parsedId);
        add(`${type}.${field} = ${name}`, text(body), reconcilable ? String(parsedId) : undefined);
      }
    }
  }
  return records;
}
