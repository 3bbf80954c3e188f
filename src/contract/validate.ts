/**
 * The validator: every rule the spec states, for operations, the envelope and the status
 * callback.
 *
 * Why a declarative table walked by a small engine, and not TypeBox schemas:
 * - The rules live in per-type tables (operations.ts, status-callback.ts), each next to the
 *   hand-written interface it describes and checked against it at compile time
 *   (field-rules.ts), so the interfaces keep their per-field JSDoc and cannot drift from
 *   the rules.
 * - Each failure must name the field, a rule from a closed set (a bounded metric label) and
 *   a fixed text, e.g. `sms_lifetime: must be between 3600 and 259200 seconds`. JSON Schema
 *   errors would have to be translated back to that, and the cross-field rules (fields
 *   required by `viber_type`, channel objects required by `pipeline`, no repeats) would need
 *   custom keywords anyway.
 * - It runs on every command (30,000+/s). The tables are compiled once, at module load, into
 *   arrays; checking a valid operation reads each field once, runs `typeof` and a few
 *   comparisons, and allocates nothing but the result object. Failures for leaf rules are
 *   preallocated; only the dotted path of a failure is built, and only on failure. The
 *   first failure is returned (no error list).
 * - URL fields use `URL.canParse` after an http(s) prefix test (no URL object is built).
 *
 * Decisions where the spec is loose are documented beside the tables: pipeline `id`
 * optional (pipeline rule 4), pipeline `telegram.message` without the digit rule, callback
 * `type` not restricted to the listed values, nothing invented where the spec says "not shown".
 */
import type { AnyRule, FieldRule, RuleName } from './field-rules.ts';
import { ENVELOPE_MIN_OPERATIONS, PHONE_MAX_VALUE } from './limits.ts';
import { operationTypes, WHATSAPP_TYPE } from './operation-types.ts';
import { type Operation, type OperationSpec, operationSpecs } from './operations.ts';
import { INVALID_MESSAGE_TYPE } from './response.ts';
import { type StatusCallback, statusCallbackRules } from './status-callback.ts';

export type { RuleName } from './field-rules.ts';

/**
 * The outcome of a check. On failure, `field` is a dotted path (`viber.signature`,
 * `viber_carousel.0.image`, `''` for the value itself), `path` the same in the JSON-path style
 * results carry (`viber_carousel[0].image`), `rule` a closed-set name and `message`
 * `${field}: ${rule text}` (just the text when `field` is `''`, or for a text that is the
 * gateway's own).
 */
export type ValidationResult<T> =
  | { readonly ok: true; readonly value: T }
  | {
      readonly ok: false;
      readonly field: string;
      /** `field` with array positions in brackets (`pipeline[1]`, `viber_carousel[0].image`). */
      readonly path: string;
      readonly rule: RuleName;
      readonly message: string;
    };

/** A failure relative to the value being checked; `field` is `''` for the value itself. */
interface Failure {
  readonly field: string;
  readonly rule: RuleName;
  readonly text: string;
  /** The text is the gateway's own error, to be reported exactly as the gateway words it. */
  readonly verbatim?: true;
}

type CompiledRule =
  | {
      readonly kind:
        | 'string'
        | 'number'
        | 'boolean'
        | 'url'
        | 'uri'
        | 'phone'
        | 'date_time'
        | 'opaque_object';
    }
  | {
      readonly kind: 'seconds_range';
      readonly minS: number;
      readonly maxS: number;
      readonly failure: Failure;
    }
  | { readonly kind: 'digits'; readonly pattern: RegExp; readonly failure: Failure }
  | { readonly kind: 'enum'; readonly values: ReadonlySet<string>; readonly failure: Failure }
  | { readonly kind: 'object'; readonly fields: readonly CompiledField[] }
  | { readonly kind: 'object_array'; readonly items: readonly CompiledField[] }
  | {
      readonly kind: 'unique_enum_array';
      readonly values: ReadonlySet<string>;
      readonly minItems: number;
      readonly failure: Failure;
      readonly tooFew: Failure;
    };

interface CompiledField {
  readonly name: string;
  readonly required: boolean;
  readonly rule: CompiledRule;
}

interface CompiledSpec {
  readonly fields: readonly CompiledField[];
  readonly requiredByValue:
    | { readonly field: string; readonly requires: ReadonlyMap<string, readonly string[]> }
    | undefined;
  readonly requiredWhenNamed:
    | { readonly field: string; readonly names: ReadonlySet<string> }
    | undefined;
}

// Leaf failures, shared: they carry no path until a caller prefixes the field name.
const leaf = (rule: RuleName, text: string): Failure => Object.freeze({ field: '', rule, text });
const isRequired = leaf('required', 'is required');
const notString = leaf('json_type', 'must be a string');
const notNumber = leaf('json_type', 'must be a number');
const notBoolean = leaf('json_type', 'must be a boolean');
const notArray = leaf('json_type', 'must be an array');
const notObject = leaf('not_object', 'must be an object');
const notHttpUrl = leaf('url', 'must be an absolute http(s) URL');
const notUri = leaf('url', 'must be an absolute URI');
const notPhone = leaf(
  'phone_format',
  'must be an integer in international format, digits only, at most 15 digits',
);
const notDateTime = leaf('date_time', 'must be an ISO 8601 date-time with UTC offset');

const HTTP_URL_PREFIX = /^https?:\/\//i;
// RFC 3339 / ISO 8601 extended date-time with a mandatory offset (`Z`, `±hh`, `±hhmm`, `±hh:mm`).
export const DATE_TIME =
  /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}(?::\d{2}(?:[.,]\d+)?)?(?:[Zz]|[+-]\d{2}(?::?\d{2})?)$/;

function compileRule(rule: AnyRule): CompiledRule {
  switch (rule.kind) {
    case 'seconds_range': {
      const maxS = rule.maxS ?? Number.POSITIVE_INFINITY;
      const text =
        rule.maxS === undefined
          ? `must be at least ${rule.minS} seconds`
          : `must be between ${rule.minS} and ${rule.maxS} seconds`;
      return { kind: 'seconds_range', minS: rule.minS, maxS, failure: leaf('range', text) };
    }
    case 'digits':
      return {
        kind: 'digits',
        pattern: new RegExp(`^[0-9]{${rule.minDigits},${rule.maxDigits}}$`),
        failure: leaf('pattern', `must be ${rule.minDigits} to ${rule.maxDigits} digits`),
      };
    case 'enum':
      return {
        kind: 'enum',
        values: new Set(rule.values),
        failure: leaf('enum', `must be one of ${rule.values.join(', ')}`),
      };
    case 'unique_enum_array': {
      const minItems = rule.minItems ?? 0;
      return {
        kind: 'unique_enum_array',
        values: new Set(rule.values),
        minItems,
        failure: leaf('enum', `must be one of ${rule.values.join(', ')}`),
        tooFew: leaf(
          'min_items',
          `must have at least ${minItems} item${minItems === 1 ? '' : 's'}`,
        ),
      };
    }
    case 'object':
      return { kind: 'object', fields: compileFields(rule.fields) };
    case 'object_array':
      return { kind: 'object_array', items: compileFields(rule.items) };
    default:
      return { kind: rule.kind };
  }
}

function compileFields(table: object): readonly CompiledField[] {
  return Object.entries(table as Readonly<Record<string, FieldRule>>).map(([name, rule]) => ({
    name,
    required: rule.required,
    rule: compileRule(rule),
  }));
}

function compileSpec(spec: OperationSpec<{ type: string }>): CompiledSpec {
  const byValue = spec.requiredByValue;
  const named = spec.requiredWhenNamed;
  return {
    fields: compileFields(spec.fields),
    requiredByValue:
      byValue === undefined
        ? undefined
        : { field: byValue.field, requires: new Map(Object.entries(byValue.requires)) },
    requiredWhenNamed:
      named === undefined ? undefined : { field: named.field, names: new Set(named.names) },
  };
}

const compiledSpecs: ReadonlyMap<string, CompiledSpec> = new Map(
  operationTypes.map((type) => [
    type,
    compileSpec(operationSpecs[type] as OperationSpec<{ type: string }>),
  ]),
);
const compiledCallbackFields = compileFields(statusCallbackRules);

const unknownTypeText = `must be one of ${operationTypes.join(', ')}`;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Puts `name` in front of a failure's path (runs only on failure). */
function under(name: string, failure: Failure): Failure {
  return {
    field: failure.field === '' ? name : `${name}.${failure.field}`,
    rule: failure.rule,
    text: failure.text,
  };
}

function checkValue(value: unknown, rule: CompiledRule): Failure | undefined {
  switch (rule.kind) {
    case 'string':
      return typeof value === 'string' ? undefined : notString;
    case 'number':
      return typeof value === 'number' && Number.isFinite(value) ? undefined : notNumber;
    case 'boolean':
      return typeof value === 'boolean' ? undefined : notBoolean;
    case 'url':
      if (typeof value !== 'string') return notString;
      return HTTP_URL_PREFIX.test(value) && URL.canParse(value) ? undefined : notHttpUrl;
    case 'uri':
      if (typeof value !== 'string') return notString;
      return URL.canParse(value) ? undefined : notUri;
    case 'phone':
      return typeof value === 'number' &&
        Number.isSafeInteger(value) &&
        value > 0 &&
        value <= PHONE_MAX_VALUE
        ? undefined
        : notPhone;
    case 'date_time':
      if (typeof value !== 'string') return notString;
      return DATE_TIME.test(value) ? undefined : notDateTime;
    case 'opaque_object':
      return isObject(value) ? undefined : notObject;
    case 'seconds_range':
      if (typeof value !== 'number' || !Number.isFinite(value)) return notNumber;
      return value >= rule.minS && value <= rule.maxS ? undefined : rule.failure;
    case 'digits':
      if (typeof value !== 'string') return notString;
      return rule.pattern.test(value) ? undefined : rule.failure;
    case 'enum':
      if (typeof value !== 'string') return notString;
      return rule.values.has(value) ? undefined : rule.failure;
    case 'object':
      return isObject(value) ? checkFields(value, rule.fields) : notObject;
    case 'object_array':
      return checkObjectArray(value, rule.items);
    case 'unique_enum_array':
      return checkUniqueEnumArray(value, rule);
  }
}

function checkFields(
  object: Record<string, unknown>,
  fields: readonly CompiledField[],
): Failure | undefined {
  for (const field of fields) {
    const value = object[field.name];
    if (value === undefined) {
      if (field.required) return under(field.name, isRequired);
      continue;
    }
    const failure = checkValue(value, field.rule);
    if (failure !== undefined) return under(field.name, failure);
  }
  return undefined;
}

function checkObjectArray(value: unknown, items: readonly CompiledField[]): Failure | undefined {
  if (!Array.isArray(value)) return notArray;
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index];
    if (!isObject(item)) return under(String(index), notObject);
    const failure = checkFields(item, items);
    if (failure !== undefined) return under(String(index), failure);
  }
  return undefined;
}

function checkUniqueEnumArray(
  value: unknown,
  rule: CompiledRule & { kind: 'unique_enum_array' },
): Failure | undefined {
  if (!Array.isArray(value)) return notArray;
  if (value.length < rule.minItems) return rule.tooFew;
  const { values, failure: notAllowed } = rule;
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index];
    if (typeof item !== 'string') return under(String(index), notString);
    if (!values.has(item)) return under(String(index), notAllowed);
    // Arrays here are a handful of channels: a backwards scan beats building a Set.
    for (let earlier = 0; earlier < index; earlier++) {
      if (value[earlier] === item) {
        return { field: String(index), rule: 'duplicate', text: `must not repeat ${item}` };
      }
    }
  }
  return undefined;
}

function checkCrossField(object: Record<string, unknown>, spec: CompiledSpec): Failure | undefined {
  const byValue = spec.requiredByValue;
  if (byValue !== undefined) {
    // The table has already checked the selector's type and allowed values.
    const selector = object[byValue.field];
    const requires = typeof selector === 'string' ? byValue.requires.get(selector) : undefined;
    if (requires !== undefined) {
      for (const name of requires) {
        if (object[name] === undefined) {
          return {
            field: name,
            rule: 'required',
            text: `is required when ${byValue.field} is ${String(selector)}`,
          };
        }
      }
    }
  }
  const named = spec.requiredWhenNamed;
  if (named !== undefined) {
    const list = object[named.field];
    if (Array.isArray(list)) {
      for (const name of list) {
        if (typeof name === 'string' && named.names.has(name) && object[name] === undefined) {
          return {
            field: name,
            rule: 'required',
            text: `is required when ${named.field} names ${name}`,
          };
        }
      }
    }
  }
  return undefined;
}

/** A dotted failure path in bracket form: numeric segments are array positions. */
export function bracketPath(dotted: string): string {
  return dotted.replace(/\.(\d+)(?=\.|$)/g, '[$1]');
}

function failed<T>(failure: Failure): ValidationResult<T> {
  return {
    ok: false,
    field: failure.field,
    path: bracketPath(failure.field),
    rule: failure.rule,
    message:
      failure.field === '' || failure.verbatim ? failure.text : `${failure.field}: ${failure.text}`,
  };
}

const operationNotObject: Failure = leaf('not_object', 'operation must be a JSON object');
const envelopeNotObject: Failure = leaf('not_object', 'envelope must be a JSON object');
const callbackNotObject: Failure = leaf('not_object', 'callback must be a JSON object');
const typeRequired: Failure = under('type', isRequired);
const typeNotString: Failure = under('type', notString);
// The gateway's own item error text (spec: Endpoints, Errors), without a field prefix: a
// reader comparing ferry's refusal with the gateway's must see the same words.
const typeWhatsapp: Failure = {
  field: 'type',
  rule: 'invalid_type',
  text: INVALID_MESSAGE_TYPE,
  verbatim: true,
};
const typeUnknown: Failure = { field: 'type', rule: 'invalid_type', text: unknownTypeText };

/**
 * Checks one operation object against every rule of the spec for its `type`: required fields
 * and their JSON types, `phone` format, URL fields, lifetimes (spec: Limits), the telegram
 * password form, `viber_type` and the fields it requires, `pipeline` values and channel
 * objects. `type: "whatsapp"` fails with the gateway's exact text `Invalid message type`
 * (no `type: ` prefix; `field` still says `type`).
 *
 * Never throws. Returns the first failure found. Unknown properties pass: on success `value`
 * is the very object given, untouched.
 */
export function validateOperation(value: unknown): ValidationResult<Operation> {
  if (!isObject(value)) return failed(operationNotObject);
  const type = value.type;
  if (type === undefined) return failed(typeRequired);
  if (typeof type !== 'string') return failed(typeNotString);
  const spec = compiledSpecs.get(type);
  if (spec === undefined) return failed(type === WHATSAPP_TYPE ? typeWhatsapp : typeUnknown);
  const failure = checkFields(value, spec.fields) ?? checkCrossField(value, spec);
  if (failure !== undefined) return failed(failure);
  return { ok: true, value: value as Operation };
}

/**
 * Checks a request envelope's shape (spec: Request envelope): an object with `auth` a string
 * and `data` an array of at least 1 item. Does not validate the items themselves.
 * Never throws.
 */
export function validateEnvelopeShape(
  value: unknown,
): ValidationResult<{ auth: string; data: unknown[] }> {
  if (!isObject(value)) return failed(envelopeNotObject);
  const auth = value.auth;
  if (auth === undefined) return failed(under('auth', isRequired));
  if (typeof auth !== 'string') return failed(under('auth', notString));
  const data = value.data;
  if (data === undefined) return failed(under('data', isRequired));
  if (!Array.isArray(data)) return failed(under('data', notArray));
  if (data.length < ENVELOPE_MIN_OPERATIONS) {
    return failed({
      field: 'data',
      rule: 'min_items',
      text: `must have at least ${ENVELOPE_MIN_OPERATIONS} item`,
    });
  }
  return { ok: true, value: value as { auth: string; data: unknown[] } };
}

/**
 * Checks a status callback body against the spec's Events table: `success` a required
 * boolean; `id`, `msg_id`, `type`, `status`, `error`, `reply`, `request_id` strings;
 * `updated` an ISO 8601 date-time with offset; `duration` a number; `replies` an array of
 * reply objects (`datetime`, `message`, `media` {`url`, `filename`, `filesize`}).
 * Unknown properties pass. Never throws.
 */
export function validateStatusCallback(value: unknown): ValidationResult<StatusCallback> {
  if (!isObject(value)) return failed(callbackNotObject);
  const failure = checkFields(value, compiledCallbackFields);
  if (failure !== undefined) return failed(failure);
  return { ok: true, value: value as StatusCallback };
}
