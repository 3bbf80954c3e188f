/**
 * A result as the value of its record: JSON that never throws and never grows past a byte
 * budget. A result echoes the command and the gateway, so a field can be too deep, too odd
 * (a cycle, a BigInt) or too large for the record; such fields are cut to previews rather
 * than letting the record fail, because a record that cannot be written would stop its
 * partition.
 */
import type { Result } from './result.ts';
import { PREVIEW_CHARS, previewOf } from './value-preview.ts';

/** The result fields that can be large (they echo the command or the gateway), largest risk first. */
const CUTTABLE_FIELDS = ['data', 'error', 'id', 'type', 'msg_id', 'request_id', 'parts'] as const;

/** JSON.stringify, or undefined when it throws (too deep, a cycle, a BigInt). */
function tryStringify(value: unknown): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}

/** Whether text takes at most `maxBytes` bytes of UTF-8; counted only when it matters. */
function fits(text: string, maxBytes: number): boolean {
  // A UTF-16 unit takes 1 to 3 bytes of UTF-8.
  if (text.length * 3 <= maxBytes) return true;
  if (text.length > maxBytes) return false;
  return Buffer.byteLength(text, 'utf8') <= maxBytes;
}

/**
 * A result as the value of its record, at most `maxBytes` bytes of UTF-8. Never throws.
 * When the whole result cannot be encoded or is too large, each large field (or one that
 * JSON cannot encode) is replaced by its preview and `truncated: true` is set; the result
 * keeps `success`, `stage`, `transport`, `attempts` and `completed_at` whatever happens.
 */
export function encodeResult(result: Result, maxBytes: number): string {
  const whole = tryStringify(result);
  if (whole !== undefined && fits(whole, maxBytes)) return whole;
  const cut: Result = { ...result, truncated: true };
  const fields = cut as unknown as Record<string, unknown>;
  for (const field of CUTTABLE_FIELDS) {
    const value = fields[field];
    if (value === undefined) continue;
    const encoded = tryStringify(value);
    if (encoded === undefined || encoded.length > PREVIEW_CHARS) fields[field] = previewOf(value);
  }
  const reduced = tryStringify(cut);
  if (reduced !== undefined && fits(reduced, maxBytes)) return reduced;
  // Only when the cap is smaller than a handful of previews: the fields that are always small.
  return JSON.stringify({
    success: result.success === true,
    error: 'the result did not fit FERRY_RECORD_MAX_BYTES',
    ...(result.code === undefined ? {} : { code: String(result.code) }),
    stage: String(result.stage),
    transport: String(result.transport),
    attempts: Number(result.attempts) || 0,
    completed_at: String(result.completed_at),
    truncated: true,
  });
}
