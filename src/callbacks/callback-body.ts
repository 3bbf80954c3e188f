/**
 * What a callback body says, whatever its `Content-Type` claims: gateways and the proxies in
 * front of them send receipts as `application/json`, `text/plain`, with no header at all, or
 * form-encoded, and a receipt refused for its label is a receipt lost (docs/callbacks.md,
 * What is understood). The body is judged by its bytes; the header only picks the text
 * encoding and tells a form from JSON.
 */
import secureJsonParse from 'secure-json-parse';
import { jsonNestingDepth } from '../json/safe-json.ts';

export type DecodedBody =
  | {
      readonly ok: true;
      readonly value: Record<string, unknown>;
      /** How the body was read: a JSON object, or `key=value&…` pairs. */
      readonly format: 'json' | 'form';
    }
  /** Not something a status event can be made of: the body is kept raw, with this reason. */
  | { readonly ok: false; readonly reason: string };

/** Fields whose large integers keep every digit (JSON numbers past 2^53 lose their last ones). */
const ID_FIELDS: ReadonlySet<string> = new Set(['id', 'msg_id', 'request_id']);
const INTEGER_SOURCE = /^-?\d+$/;
/** 16 digits in a row: only then can a number be past 2^53 and need the (slower) reviver. */
const LONG_DIGITS = /\d{16}/;
const FORM_MEDIA_TYPE = 'application/x-www-form-urlencoded';
/** `name=` at the start, the name plain: `id=1&…`, `msg_id=…`. */
const FORM_START = /^[A-Za-z_][\w.-]*=/;

/** The media type and `charset` of a `Content-Type` header, lower-cased; '' when absent. */
export function parseContentType(header: string | undefined): {
  readonly mediaType: string;
  readonly charset: string | undefined;
} {
  if (header === undefined) return { mediaType: '', charset: undefined };
  const [mediaType = '', ...parameters] = header.split(';');
  let charset: string | undefined;
  for (const parameter of parameters) {
    const [name = '', value = ''] = parameter.split('=');
    if (name.trim().toLowerCase() === 'charset') {
      charset = value.trim().replace(/^"|"$/g, '').toLowerCase();
    }
  }
  return { mediaType: mediaType.trim().toLowerCase(), charset };
}

/**
 * The body's text: in the declared charset when the platform knows it (a gateway that says
 * `latin1` and means it), else UTF-8; strictly, so bytes that are not text in that encoding
 * are reported (with the encoding's name) instead of turned into replacement characters.
 */
function decodeText(
  bytes: Buffer,
  charset: string | undefined,
): { readonly text: string } | { readonly encoding: string } {
  const decoder = decoderFor(charset ?? 'utf-8');
  try {
    return { text: decoder.decode(bytes) };
  } catch {
    return { encoding: decoder.encoding };
  }
}

/** Decoders by charset label, made once (a whole-buffer decode keeps no state between calls). */
const decoders = new Map<string, InstanceType<typeof TextDecoder>>();
/** Labels remembered at most: the label is the caller's, so the map must not grow without end. */
const MAX_DECODERS = 32;

function decoderFor(label: string): InstanceType<typeof TextDecoder> {
  const known = decoders.get(label);
  if (known !== undefined) return known;
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(label, { fatal: true });
  } catch {
    // An unknown label: JSON is UTF-8 (RFC 8259 §8.1), so try that rather than give up.
    decoder = new TextDecoder('utf-8', { fatal: true });
  }
  if (decoders.size < MAX_DECODERS) decoders.set(label, decoder);
  return decoder;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Keeps every digit of an id JSON.parse would round (a number past 2^53): its source text. */
const keepIdDigits = function keepIdDigits(
  this: unknown,
  key: string,
  parsed: unknown,
  context?: { source?: string },
) {
  if (
    typeof parsed === 'number' &&
    ID_FIELDS.has(key) &&
    !Number.isSafeInteger(parsed) &&
    context?.source !== undefined &&
    INTEGER_SOURCE.test(context.source)
  ) {
    return context.source;
  }
  return parsed;
} as (key: string, value: unknown) => unknown;

function parseJson(text: string, maxDepth: number): DecodedBody {
  if (jsonNestingDepth(text, maxDepth) > maxDepth) {
    return { ok: false, reason: `nested deeper than ${maxDepth} levels` };
  }
  let value: unknown;
  try {
    // secure-json-parse refuses `__proto__` and `constructor.prototype` keys (prototype
    // pollution); the reviver keeps the digits of ids JSON.parse would round.
    value = secureJsonParse(text, LONG_DIGITS.test(text) ? keepIdDigits : null, {
      protoAction: 'error',
      constructorAction: 'error',
    });
  } catch (error: unknown) {
    if (error instanceof SyntaxError && /forbidden prototype property/.test(error.message)) {
      return { ok: false, reason: 'has __proto__ or constructor.prototype keys' };
    }
    return { ok: false, reason: 'not JSON' };
  }
  if (!isObject(value)) return { ok: false, reason: 'not a JSON object' };
  return { ok: true, value, format: 'json' };
}

/**
 * `application/x-www-form-urlencoded`: every value a string (the normaliser reads `1`,
 * `true`, numbers in strings). A repeated name keeps its first value. Names that would touch
 * a prototype are refused like in JSON.
 */
function parseForm(text: string): DecodedBody {
  const value: Record<string, unknown> = {};
  for (const [name, field] of new URLSearchParams(text)) {
    if (name === '__proto__' || name === 'constructor' || name === 'prototype') {
      return { ok: false, reason: 'has __proto__ or constructor.prototype keys' };
    }
    if (!Object.hasOwn(value, name)) value[name] = field;
  }
  if (Object.keys(value).length === 0) return { ok: false, reason: 'an empty form' };
  return { ok: true, value, format: 'form' };
}

/**
 * Reads a callback body. Never throws.
 *
 * A body labelled form-encoded is read as a form (unless it is plainly JSON); anything else,
 * whatever its label or none, is read as JSON and must be an object, and failing that as a
 * form when it starts like one (`name=`). An empty body, text that is not valid in
 * its encoding, nesting deeper than `maxDepth`, or prototype keys are reported with a reason.
 */
export function decodeCallbackBody(
  bytes: Buffer,
  contentType: string | undefined,
  maxDepth: number,
): DecodedBody {
  if (bytes.length === 0) return { ok: false, reason: 'an empty body' };
  const { mediaType, charset } = parseContentType(contentType);
  const decoded = decodeText(bytes, charset);
  if (!('text' in decoded))
    return { ok: false, reason: `not valid ${decoded.encoding.toUpperCase()} text` };
  const { text } = decoded;
  // A UTF-8 byte order mark, which some Windows-made senders put first.
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  const looksLikeJson = /^\s*[[{"]/.test(body);
  if (mediaType === FORM_MEDIA_TYPE && !looksLikeJson) return parseForm(body);
  const json = parseJson(body, maxDepth);
  // Unlabelled `id=1&status=DELIVERED`: a form whose sender forgot to say so.
  if (!json.ok && json.reason === 'not JSON' && FORM_START.test(body)) return parseForm(body);
  return json;
}
