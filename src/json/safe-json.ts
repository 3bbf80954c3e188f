/**
 * JSON parsing for text that strangers send (callback bodies, command records): nesting depth
 * checked by a linear scan before the parser runs (so a 100,000-deep text is refused without
 * recursion anywhere), then, for `parseSafeJson`, `secure-json-parse`, which refuses
 * `__proto__` keys and `constructor.prototype` (prototype pollution) with an iterative scan.
 */
import secureJsonParse from 'secure-json-parse';

export type SafeJsonResult =
  | { readonly ok: true; readonly value: unknown }
  | { readonly ok: false; readonly reason: string };

const OPEN_BRACE = 0x7b; // {
const CLOSE_BRACE = 0x7d; // }
const OPEN_BRACKET = 0x5b; // [
const CLOSE_BRACKET = 0x5d; // ]
const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \

/**
 * The deepest nesting of objects and arrays in a JSON text (`{}` is 1, `{"a":[]}` is 2),
 * counted without parsing; stops counting as soon as `limit` is exceeded and returns
 * `limit + 1`. Brackets inside strings do not count. Malformed text gets a number too; the
 * parser judges it afterwards.
 */
export function jsonNestingDepth(text: string, limit: number): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (inString) {
      if (code === BACKSLASH) index++;
      else if (code === QUOTE) inString = false;
      continue;
    }
    if (code === QUOTE) {
      inString = true;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth++;
      if (depth > deepest) {
        deepest = depth;
        if (deepest > limit) return limit + 1;
      }
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return deepest;
}

/**
 * Parses JSON text safely. Never throws.
 *
 * Refuses, with a short reason: nesting deeper than `maxDepth` (objects and arrays), text
 * that is not JSON, and `__proto__` / `constructor.prototype` keys at any depth.
 */
export function parseSafeJson(text: string, maxDepth: number): SafeJsonResult {
  if (jsonNestingDepth(text, maxDepth) > maxDepth) {
    return { ok: false, reason: `body: nested deeper than ${maxDepth} levels` };
  }
  let value: unknown;
  try {
    value = secureJsonParse(text, null, { protoAction: 'error', constructorAction: 'error' });
  } catch (error: unknown) {
    if (error instanceof SyntaxError && /forbidden prototype property/.test(error.message)) {
      return { ok: false, reason: 'body: __proto__ and constructor.prototype keys are refused' };
    }
    return { ok: false, reason: 'body: not valid JSON' };
  }
  return { ok: true, value };
}
