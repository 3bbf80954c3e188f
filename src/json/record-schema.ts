/**
 * A JSON Schema written beside the interface of a record ferry writes (result, status event),
 * checked against that interface at compile time: every declared property has exactly one
 * schema, its requiredness matches the property's optionality, and its JSON type fits the
 * property's TypeScript type. The records ferry builds in code and the schemas it publishes
 * (schemas/) therefore cannot drift apart silently.
 */
import type { IsOptional, KnownKeys } from '../contract/field-rules.ts';
import type { JsonSchema } from '../contract/json-schema.ts';

export type { JsonSchema } from '../contract/json-schema.ts';

/** The JSON Schema `type` names that fit a TypeScript type `V`. */
type JsonTypeOf<V> = [V] extends [boolean]
  ? 'boolean'
  : [V] extends [number]
    ? 'number' | 'integer'
    : [V] extends [string]
      ? 'string'
      : [V] extends [readonly unknown[]]
        ? 'array'
        : 'object';

/**
 * A schema that fits values of `V`: anything for `unknown`; otherwise a `type` of the right
 * JSON kind (with an `enum` of `V`'s values, if any) or a `const` of `V`.
 */
export type SchemaFor<V> = unknown extends V
  ? JsonSchema
  :
      | ({ readonly type: JsonTypeOf<V>; readonly enum?: readonly V[] } & JsonSchema)
      | ({ readonly const: V } & JsonSchema);

/** One property of a record schema: its schema and whether the record always has it. */
export interface PropertySchema<V, Required extends boolean> {
  readonly schema: SchemaFor<V>;
  readonly required: Required;
}

/**
 * One schema per declared property of `T`, `required` matching its optionality. `Ahead`
 * names optional properties published before `T` declares them (a field another change adds
 * to the record); once `T` declares one, its schema is checked against it like the others.
 */
export type RecordProperties<T, Ahead extends string = never> = {
  readonly [K in KnownKeys<T>]-?: PropertySchema<
    Exclude<T[K], undefined>,
    IsOptional<T, K> extends true ? false : true
  >;
} & { readonly [K in Exclude<Ahead, KnownKeys<T>>]: PropertySchema<unknown, false> };

/** A property every record has. */
export function always<const S extends JsonSchema>(schema: S): { schema: S; required: true } {
  return { schema, required: true };
}

/** A property a record may leave out. */
export function sometimes<const S extends JsonSchema>(schema: S): { schema: S; required: false } {
  return { schema, required: false };
}

/** What the record schema says besides its properties. */
export interface RecordSchemaText {
  readonly title: string;
  readonly description: string;
  /** Whether properties the table does not list may appear (false for records ferry builds itself). */
  readonly additionalProperties: boolean;
}

/**
 * Builds the JSON Schema of interface `T` from its property table; curried so that `T` is
 * given and the table is checked against it.
 */
export function recordSchema<T, Ahead extends string = never>() {
  return (text: RecordSchemaText, properties: RecordProperties<T, Ahead>): JsonSchema => {
    const schemas: Record<string, unknown> = {};
    const required: string[] = [];
    for (const [name, property] of Object.entries(
      properties as Readonly<Record<string, PropertySchema<unknown, boolean>>>,
    )) {
      schemas[name] = property.schema;
      if (property.required) required.push(name);
    }
    return {
      title: text.title,
      description: text.description,
      type: 'object',
      properties: schemas,
      required,
      additionalProperties: text.additionalProperties,
    };
  };
}

/**
 * Every value of the string union `U`, as an array for an `enum`: a value missing from the
 * list, or one `U` does not have, is a compile error.
 */
export function everyValue<U extends string>() {
  return <const A extends readonly U[]>(values: A & ([U] extends [A[number]] ? unknown : never)) =>
    values;
}
