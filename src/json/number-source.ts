/**
 * JSON numbers as they were written. `JSON.parse` reads every number as a double, so
 * `9007199254740993` becomes `9007199254740992` and `1e400` becomes Infinity (which
 * `JSON.stringify` writes as `null`): a value echoed back would not be the one that came.
 * These recover a number's source text (the reviver's `context.source`) and write it back
 * unchanged (`JSON.rawJSON`); both are in Node since 21, not yet in TypeScript's lib.
 */

/** What `JSON.parse` passes a reviver as its third argument. */
interface ReviverContext {
  /** The value's own text, for primitives. */
  readonly source?: string;
}

type SourceReviver = (
  this: object,
  key: string,
  value: unknown,
  context?: ReviverContext,
) => unknown;

/** `JSON.rawJSON` and `JSON.isRawJSON`: a value `JSON.stringify` writes as the given text, unchanged. */
const { rawJSON, isRawJSON } = JSON as unknown as {
  rawJSON(text: string): object;
  isRawJSON(value: unknown): boolean;
};

/**
 * The source text of the number at `key` of the object `text` holds (its top level only:
 * a nested object's `key` is not it), or undefined when there is none or `text` is not
 * JSON. Parses `text` again, so call it only when a number needs it.
 */
export function topLevelNumberSource(text: string, key: string): string | undefined {
  const sources = new Map<object, string>();
  let root: unknown;
  const reviver: SourceReviver = function keepSource(this: object, name, value, context) {
    if (name === key && typeof value === 'number' && context?.source !== undefined) {
      sources.set(this, context.source);
    }
    // The reviver's last call is for the root, under the key '' (a nested "" key comes earlier).
    if (name === '') root = value;
    return value;
  };
  try {
    JSON.parse(text, reviver as (key: string, value: unknown) => unknown);
  } catch {
    return undefined;
  }
  return typeof root === 'object' && root !== null ? sources.get(root) : undefined;
}

/**
 * A value that `JSON.stringify` writes as `source` itself: the number with every digit
 * it was written with. `source` must be JSON number text (as {@link topLevelNumberSource} gives).
 * @throws SyntaxError when it is not.
 */
export function exactNumber(source: string): unknown {
  return rawJSON(source);
}

/** Whether `value` came from {@link exactNumber}: an object to the eye, a number to JSON.stringify. */
export function isExactNumber(value: unknown): boolean {
  return isRawJSON(value);
}
