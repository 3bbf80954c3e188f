/**
 * The vocabulary of the declarative rule tables (see operations.ts, status-callback.ts) and
 * the type-level link between a table and its interface.
 *
 * A table is written next to its interface and declared with `satisfies FieldRules<T>`, so
 * the compiler checks that every declared property of `T` has exactly one rule, that the
 * rule's kind fits the property's TypeScript type (a `url` rule on a string, a `phone` rule
 * on a number, an `object` rule whose nested table fits the nested interface) and that
 * `required` is `true` exactly when the property is not optional. The interface and the
 * rules therefore cannot drift apart silently (STYLE.md: no schema written apart from its type).
 */

/**
 * Names of the rules a value can break: a small closed set, usable as a bounded metric label.
 * - `not_object`: the operation, callback, envelope or a nested value is not a JSON object
 * - `required`: a required field is missing (absent or `undefined`; `null` counts as present)
 * - `json_type`: a field has the wrong JSON type
 * - `phone_format`: not an integer in international format (digits only, at most 15 digits)
 * - `url`: not an absolute http(s) URL (or, for `uri` fields, not an absolute URI)
 * - `range`: a number outside the bounds of the Limits table
 * - `pattern`: a string outside its stated form (telegram password digits)
 * - `date_time`: not an ISO 8601 date-time with UTC offset
 * - `enum`: a value outside a stated set
 * - `duplicate`: a value repeated where the spec forbids repeats (`pipeline`)
 * - `invalid_type`: `type` is not an operation type (`whatsapp` or unknown)
 * - `min_items`: an array shorter than its minimum (envelope `data`, `pipeline` channels)
 */
export const ruleNames = [
  'not_object',
  'required',
  'json_type',
  'phone_format',
  'url',
  'range',
  'pattern',
  'date_time',
  'enum',
  'duplicate',
  'invalid_type',
  'min_items',
] as const;

export type RuleName = (typeof ruleNames)[number];

/** Any JSON string. */
export interface StringRule {
  readonly kind: 'string';
}
/** Any finite JSON number. */
export interface NumberRule {
  readonly kind: 'number';
}
export interface BooleanRule {
  readonly kind: 'boolean';
}
/** An absolute `http:` or `https:` URL (spec types the field as "string (URL)"). */
export interface UrlRule {
  readonly kind: 'url';
}
/** An absolute URI of any scheme (spec types the field as "string, URI"). */
export interface UriRule {
  readonly kind: 'uri';
}
/** A phone number: a JSON number that is a positive integer of at most 15 digits. */
export interface PhoneRule {
  readonly kind: 'phone';
}
/** A number of seconds within `[minS, maxS]`; `maxS` absent when the spec states none. */
export interface SecondsRangeRule {
  readonly kind: 'seconds_range';
  readonly minS: number;
  readonly maxS?: number;
}
/** A string of ASCII digits only, `minDigits` to `maxDigits` long. */
export interface DigitsRule {
  readonly kind: 'digits';
  readonly minDigits: number;
  readonly maxDigits: number;
}
/** An ISO 8601 / RFC 3339 date-time with a UTC offset (`Z` or `±hh:mm`). */
export interface DateTimeRule {
  readonly kind: 'date_time';
}
/** One of a fixed set of strings. */
export interface EnumRule<V extends string = string> {
  readonly kind: 'enum';
  readonly values: readonly V[];
}
/** A JSON object whose own fields follow a nested table. */
export interface ObjectRule<T = unknown> {
  readonly kind: 'object';
  readonly fields: FieldRules<T>;
}
/** A JSON object whose contents are not validated (spec: pipeline `whatsapp`, `rcs`). */
export interface OpaqueObjectRule {
  readonly kind: 'opaque_object';
}
/** A JSON array of objects, each following a nested table. No minimum length is implied. */
export interface ObjectArrayRule<T = unknown> {
  readonly kind: 'object_array';
  readonly items: FieldRules<T>;
}
/** A JSON array of strings from a fixed set, none repeated, at least `minItems` long (0 when absent). */
export interface UniqueEnumArrayRule<V extends string = string> {
  readonly kind: 'unique_enum_array';
  readonly values: readonly V[];
  readonly minItems?: number;
}

/** Every rule kind, untyped (what the validator's engine walks). */
export type AnyRule =
  | StringRule
  | NumberRule
  | BooleanRule
  | UrlRule
  | UriRule
  | PhoneRule
  | SecondsRangeRule
  | DigitsRule
  | DateTimeRule
  | EnumRule
  | ObjectRule
  | OpaqueObjectRule
  | ObjectArrayRule
  | UniqueEnumArrayRule;

/** A rule plus whether its field must be present. */
export type FieldRule = AnyRule & { readonly required: boolean };

/** The rule kinds that fit a property whose (non-undefined) TypeScript type is `V`. */
export type RuleFor<V> = [V] extends [boolean]
  ? BooleanRule
  : [V] extends [number]
    ? NumberRule | PhoneRule | SecondsRangeRule
    : [V] extends [string]
      ? StringRule | UrlRule | UriRule | DigitsRule | DateTimeRule | EnumRule<V>
      : [V] extends [readonly (infer E)[]]
        ? [E] extends [string]
          ? UniqueEnumArrayRule<E>
          : ObjectArrayRule<E>
        : [V] extends [object]
          ? ObjectRule<V> | OpaqueObjectRule
          : never;

/** The declared (non-index-signature) keys of `T`, as strings. */
export type KnownKeys<T> = keyof {
  [K in keyof T as string extends K ? never : number extends K ? never : K]: T[K];
} &
  string;

/** `true` when property `K` of `T` is optional. */
export type IsOptional<T, K extends keyof T> =
  Record<never, never> extends Pick<T, K> ? true : false;

/**
 * The rule table of interface `T`: one rule per declared property except those in `Skip`,
 * `required` matching the property's optionality.
 */
export type FieldRules<T, Skip extends string = never> = {
  readonly [K in Exclude<KnownKeys<T>, Skip>]-?: RuleFor<Exclude<T[K], undefined>> & {
    readonly required: IsOptional<T, K> extends true ? false : true;
  };
};

/** Marks a rule as required (written in tables as `required(string)`). */
export function required<R extends AnyRule>(rule: R): R & { readonly required: true } {
  return { ...rule, required: true };
}

/** Marks a rule as optional: the field may be absent; when present it must follow the rule. */
export function optional<R extends AnyRule>(rule: R): R & { readonly required: false } {
  return { ...rule, required: false };
}

// Rule values for the tables; shared, immutable.
export const string: StringRule = { kind: 'string' };
export const number: NumberRule = { kind: 'number' };
export const boolean: BooleanRule = { kind: 'boolean' };
export const url: UrlRule = { kind: 'url' };
export const uri: UriRule = { kind: 'uri' };
export const phone: PhoneRule = { kind: 'phone' };
export const dateTime: DateTimeRule = { kind: 'date_time' };
export const opaqueObject: OpaqueObjectRule = { kind: 'opaque_object' };

export function secondsRange(minS: number, maxS?: number): SecondsRangeRule {
  return maxS === undefined
    ? { kind: 'seconds_range', minS }
    : { kind: 'seconds_range', minS, maxS };
}
export function digits(minDigits: number, maxDigits: number): DigitsRule {
  return { kind: 'digits', minDigits, maxDigits };
}
export function oneOf<V extends string>(values: readonly V[]): EnumRule<V> {
  return { kind: 'enum', values };
}
export function object<T>(fields: FieldRules<T>): ObjectRule<T> {
  return { kind: 'object', fields };
}
export function objectArray<T>(items: FieldRules<T>): ObjectArrayRule<T> {
  return { kind: 'object_array', items };
}
export function uniqueOneOf<V extends string>(
  values: readonly V[],
  minItems = 0,
): UniqueEnumArrayRule<V> {
  return { kind: 'unique_enum_array', values, minItems };
}
