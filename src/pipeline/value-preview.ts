/**
 * Previews of values too large or too odd to keep whole in a record: the beginning of their
 * JSON text, written without recursion and without encoding more than is kept, so neither
 * depth nor size can make building a result fail (result-encoding.ts).
 */
import { isExactNumber } from '../json/number-source.ts';

/** Characters a preview keeps of a field that had to be cut. */
export const PREVIEW_CHARS = 1000;

type Frame =
  | { readonly array: readonly unknown[]; index: number }
  | { readonly object: Record<string, unknown>; readonly keys: readonly string[]; index: number };

function primitiveJson(value: unknown, maxChars: number): string {
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value.length > maxChars ? value.slice(0, maxChars) : value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return String(value);
    case 'bigint':
      return value.toString();
    default:
      return 'null';
  }
}

/**
 * The first `maxChars` characters of a value's JSON text, written with an explicit stack
 * (no recursion, so any depth works) and stopping as soon as enough is written (so a huge
 * value costs no more than its beginning). Never throws.
 */
export function previewJson(value: unknown, maxChars: number): string {
  try {
    let out = '';
    const stack: Frame[] = [];
    let pending = true;
    let next: unknown = value;
    while (out.length < maxChars) {
      if (pending) {
        pending = false;
        if (isExactNumber(next)) {
          // An id kept with every digit: its own text, not the object that holds it.
          out += JSON.stringify(next);
        } else if (Array.isArray(next)) {
          out += '[';
          stack.push({ array: next, index: 0 });
        } else if (typeof next === 'object' && next !== null) {
          out += '{';
          const object = next as Record<string, unknown>;
          stack.push({ object, keys: Object.keys(object), index: 0 });
        } else {
          out += primitiveJson(next, maxChars);
        }
        continue;
      }
      const frame = stack[stack.length - 1];
      if (!frame) break;
      if ('array' in frame) {
        if (frame.index < frame.array.length) {
          if (frame.index > 0) out += ',';
          next = frame.array[frame.index];
          frame.index += 1;
          pending = true;
        } else {
          out += ']';
          stack.pop();
        }
      } else if (frame.index < frame.keys.length) {
        const key = frame.keys[frame.index] as string;
        out += `${frame.index > 0 ? ',' : ''}${primitiveJson(key, maxChars)}:`;
        next = frame.object[key];
        frame.index += 1;
        pending = true;
      } else {
        out += '}';
        stack.pop();
      }
    }
    return out.length > maxChars ? out.slice(0, maxChars) : out;
  } catch {
    return '';
  }
}

/**
 * What a cut field holds instead: a string keeps its beginning; any other value becomes a
 * string holding the beginning of its JSON text. `…` marks that something was left out.
 */
export function previewOf(value: unknown, maxChars = PREVIEW_CHARS): string {
  if (typeof value === 'string') {
    return value.length > maxChars ? `${value.slice(0, maxChars)}…` : value;
  }
  const text = previewJson(value, maxChars + 1);
  return text.length > maxChars ? `${text.slice(0, maxChars)}…` : text;
}
