/**
 * Adds fields to the JSON text of an object without encoding it again: the new members are
 * spliced in before the object's final `}`. Every byte of the original text stays as it was
 * (number spellings such as `1.0`, `\u00e9` escapes, key order, duplicate keys), and the cost
 * does not depend on how deep or odd the rest of the object is.
 */

const CLOSE_BRACE = 0x7d; // }
const OPEN_BRACE = 0x7b; // {

/** JSON whitespace (RFC 8259): space, tab, line feed, carriage return. */
function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x09 || code === 0x0a || code === 0x0d;
}

/**
 * Returns `text` (the JSON text of an object, already parsed successfully) with
 * `"name":<JSON of value>` appended for every entry of `fields` (entries, so that any name,
 * `__proto__` included, is kept as given); values that JSON cannot represent are skipped.
 * @throws TypeError when `text` does not end with `}` (not the text of an object), or a
 *   value cannot be encoded (JSON.stringify's own errors).
 */
export function appendJsonFields(
  text: string,
  fields: Iterable<readonly [name: string, value: unknown]>,
): string {
  let close = text.length - 1;
  while (close >= 0 && isJsonWhitespace(text.charCodeAt(close))) close--;
  if (close < 0 || text.charCodeAt(close) !== CLOSE_BRACE) {
    throw new TypeError('appendJsonFields: the text is not a JSON object');
  }
  let before = close - 1;
  while (before >= 0 && isJsonWhitespace(text.charCodeAt(before))) before--;
  // Only an empty object has `{` right before its final `}`: a member always ends with a
  // value, and no value's text ends with `{`.
  let separator = text.charCodeAt(before) === OPEN_BRACE ? '' : ',';
  let members = '';
  for (const [name, value] of fields) {
    const encoded = JSON.stringify(value);
    if (encoded === undefined) continue;
    members += `${separator}${JSON.stringify(name)}:${encoded}`;
    separator = ',';
  }
  return text.slice(0, close) + members + text.slice(close);
}
