/**
 * The rule tables (operations.ts, status-callback.ts) turned into JSON Schema, so that the
 * schemas ferry publishes (schemas/, docs/contract.md) are derived from the very tables the
 * validator runs and cannot say something else.
 *
 * Only keywords that mean the same in draft 2020-12 and in draft-07 are emitted (`type`,
 * `properties`, `required`, `enum`, `const`, `pattern`, `minimum`/`maximum`, `items`,
 * `uniqueItems`, `minItems`, `contains`, `allOf`, `if`/`then`, `format`), because the
 * AsyncAPI document embeds the same objects and AsyncAPI's schema dialect is draft-07.
 *
 * Every rule kind has one branch, and a rule carrying a property the branch does not know
 * fails generation: a new rule option then cannot be left out of the schemas silently.
 */
import type { AnyRule, FieldRule } from './field-rules.ts';
import { PHONE_MAX_DIGITS, PHONE_MAX_VALUE } from './limits.ts';
import { type OperationType, operationTypes } from './operation-types.ts';
import { type OperationSpec, operationSpecs } from './operations.ts';
import { statusCallbackRules } from './status-callback.ts';
import { DATE_TIME } from './validate.ts';

/** A JSON Schema object as plain JSON data. */
export type JsonSchema = { [keyword: string]: unknown };

/**
 * `url` fields: ferry requires an `http://` or `https://` prefix (any letter case) and then
 * a URL that the WHATWG URL parser accepts. JSON Schema patterns have no flags, hence the
 * explicit letter classes.
 */
const HTTP_URL_PATTERN = '^[Hh][Tt][Tt][Pp][Ss]?://';

/** The properties each rule kind may carry; any other is an option this file would ignore, so generation stops. */
const knownRuleProperties: { readonly [K in AnyRule['kind']]: readonly string[] } = {
  string: [],
  number: [],
  boolean: [],
  url: [],
  uri: [],
  phone: [],
  seconds_range: ['minS', 'maxS'],
  digits: ['minDigits', 'maxDigits'],
  date_time: [],
  enum: ['values'],
  object: ['fields'],
  opaque_object: [],
  object_array: ['items'],
  unique_enum_array: ['values', 'minItems'],
};

function assertKnownProperties(rule: AnyRule): void {
  const known = new Set(['kind', 'required', ...knownRuleProperties[rule.kind]]);
  for (const property of Object.keys(rule)) {
    if (!known.has(property)) {
      throw new Error(
        `json-schema: rule kind ${rule.kind} has property ${property}, which has no JSON Schema form yet`,
      );
    }
  }
}

/** The JSON Schema of one rule (the field's value, without its requiredness). */
export function ruleSchema(rule: AnyRule): JsonSchema {
  assertKnownProperties(rule);
  switch (rule.kind) {
    case 'string':
      return { type: 'string' };
    case 'number':
      return { type: 'number' };
    case 'boolean':
      return { type: 'boolean' };
    case 'url':
      return {
        type: 'string',
        format: 'uri',
        pattern: HTTP_URL_PATTERN,
        description: 'An absolute http(s) URL (ferry checks it with the WHATWG URL parser).',
      };
    case 'uri':
      return { type: 'string', format: 'uri', description: 'An absolute URI of any scheme.' };
    case 'phone':
      return {
        type: 'integer',
        minimum: 1,
        maximum: PHONE_MAX_VALUE,
        description: `A phone number in international format as a JSON number: digits only, no +, at most ${PHONE_MAX_DIGITS} digits.`,
      };
    case 'seconds_range': {
      const bounds: JsonSchema = { type: 'number', minimum: rule.minS };
      if (rule.maxS !== undefined) bounds.maximum = rule.maxS;
      bounds.description =
        rule.maxS === undefined
          ? `Seconds, at least ${rule.minS}.`
          : `Seconds, ${rule.minS} to ${rule.maxS}.`;
      return bounds;
    }
    case 'digits':
      return {
        type: 'string',
        pattern: `^[0-9]{${rule.minDigits},${rule.maxDigits}}$`,
        description: `${rule.minDigits} to ${rule.maxDigits} ASCII digits.`,
      };
    case 'date_time':
      return {
        type: 'string',
        // `[0-9]`, not `\d`: some engines (Python's) match any Unicode digit with `\d`.
        pattern: DATE_TIME.source.replaceAll('\\d', '[0-9]'),
        description:
          'An ISO 8601 date-time with a UTC offset (`Z`, `±hh`, `±hhmm` or `±hh:mm`); seconds may be left out.',
      };
    case 'enum':
      return { type: 'string', enum: [...rule.values] };
    case 'object':
      return objectSchema(rule.fields);
    case 'opaque_object':
      return { type: 'object', description: 'An object whose contents are not checked.' };
    case 'object_array':
      return { type: 'array', items: objectSchema(rule.items) };
    case 'unique_enum_array': {
      const schema: JsonSchema = {
        type: 'array',
        items: { type: 'string', enum: [...rule.values] },
        uniqueItems: true,
      };
      const minItems = 'minItems' in rule ? rule.minItems : undefined;
      if (typeof minItems === 'number' && minItems > 0) schema.minItems = minItems;
      return schema;
    }
  }
}

/** An object schema from a rule table. Unknown properties are allowed, as the validator allows them. */
export function objectSchema(table: object): JsonSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  for (const [name, rule] of Object.entries(table as Readonly<Record<string, FieldRule>>)) {
    properties[name] = ruleSchema(rule);
    if (rule.required) required.push(name);
  }
  const schema: JsonSchema = { type: 'object', properties };
  if (required.length > 0) schema.required = required;
  return schema;
}

/** A conditional subschema: when a value passes `condition`, it must pass `consequence`. */
function ifThen(condition: JsonSchema, consequence: JsonSchema): JsonSchema {
  // biome-ignore lint/suspicious/noThenProperty: `then` is the JSON Schema keyword; these objects are data, never awaited.
  return { if: condition, then: consequence };
}

/** The `if`/`then` pairs of a spec's cross-field rules (fields one value requires, channel objects `pipeline` names). */
function crossFieldSchemas(spec: OperationSpec<{ type: string }>): JsonSchema[] {
  const rules: JsonSchema[] = [];
  const byValue = spec.requiredByValue;
  if (byValue !== undefined) {
    for (const [value, fields] of Object.entries(byValue.requires)) {
      rules.push(
        ifThen(
          { properties: { [byValue.field]: { const: value } }, required: [byValue.field] },
          { required: [...fields] },
        ),
      );
    }
  }
  const named = spec.requiredWhenNamed;
  if (named !== undefined) {
    for (const name of named.names) {
      rules.push(
        ifThen(
          {
            properties: { [named.field]: { type: 'array', contains: { const: name } } },
            required: [named.field],
          },
          { required: [name] },
        ),
      );
    }
  }
  return rules;
}

/** The schema of one operation type: its rule table, `type` as a constant, and its cross-field rules. */
export function operationSchema(type: OperationType): JsonSchema {
  const spec = operationSpecs[type] as OperationSpec<{ type: string }>;
  const fields = objectSchema(spec.fields);
  const schema: JsonSchema = {
    type: 'object',
    properties: { type: { const: type }, ...(fields.properties as object) },
    required: ['type', ...((fields.required as string[] | undefined) ?? [])],
  };
  const cross = crossFieldSchemas(spec);
  if (cross.length > 0) schema.allOf = cross;
  return schema;
}

/** Every operation type's schema, in the order of `operationTypes`. */
export function operationSchemas(): ReadonlyMap<OperationType, JsonSchema> {
  return new Map(operationTypes.map((type) => [type, operationSchema(type)]));
}

/** The status callback body (spec: Events) as the rule table checks it. */
export function statusCallbackSchema(): JsonSchema {
  return objectSchema(statusCallbackRules);
}

/** A description followed by the rule's own, when both exist. */
export function joined(first: string | undefined, second: unknown): string | undefined {
  const rest = typeof second === 'string' ? second : undefined;
  if (first === undefined) return rest;
  return rest === undefined ? first : `${first} ${rest}`;
}

/**
 * A copy of `properties` with what each field means (`meaning` of its path, `a.b` for nested
 * fields, array items included) put in front of its rule's own description.
 */
export function withDescriptions(
  properties: Readonly<Record<string, JsonSchema>>,
  meaning: (path: string) => string | undefined,
  prefix = '',
): Record<string, JsonSchema> {
  const out: Record<string, JsonSchema> = {};
  for (const [name, schema] of Object.entries(properties)) {
    const path = `${prefix}${name}`;
    const copy: JsonSchema = { ...schema };
    const description = joined(meaning(path), schema.description);
    if (description !== undefined) copy.description = description;
    const nested = schema.items === undefined ? schema : (schema.items as JsonSchema);
    if (nested.properties !== undefined) {
      const inner = nested.properties as Record<string, JsonSchema>;
      const described = withDescriptions(inner, meaning, `${path}.`);
      if (nested === schema) copy.properties = described;
      else copy.items = { ...nested, properties: described };
    }
    out[name] = copy;
  }
  return out;
}
