/**
 * ferry's own rule for a command's numeric `id` (not the gateway's): at most 2^53 − 1 in
 * magnitude. Past that, JSON parsers that read numbers as doubles (ferry's own, and most
 * clients') lose the last digits: `9007199254740993` reads as `9007199254740992`, so two
 * commands could share an id, a status lookup after a lost answer could find the other
 * one's message, and a result would name an id its command never had. Such a command is
 * refused, and its result repeats the id with every digit it was written with.
 */
import { exactNumber, topLevelNumberSource } from '../json/number-source.ts';

/** The largest id magnitude ferry takes: 2^53 − 1, the last integer a double holds exactly. */
export const MAX_COMMAND_ID = Number.MAX_SAFE_INTEGER;

/** The validation rule name of an id out of range, as for every range rule of the contract. */
export const ID_RANGE_RULE = 'range';

/** The result's error for an id out of range (`field: rule`, as every validation error). */
export const ID_RANGE_ERROR = `id: must be between -${MAX_COMMAND_ID} and ${MAX_COMMAND_ID} (2^53 - 1); larger numbers lose digits when parsed`;

/**
 * Whether a parsed `id` is a number past the bound. JSON.parse has already rounded it, but
 * rounding never brings a number past 2^53 − 1 back within it, so the parsed value decides.
 */
export function idOutOfRange(id: unknown): boolean {
  return typeof id === 'number' && !(Math.abs(id) <= MAX_COMMAND_ID);
}

/**
 * The `id` a result repeats: the parsed value when it is exact, else (a number that is not a
 * safe integer: past the bound, fractional, or Infinity from `1e400`) a value that
 * `JSON.stringify` writes exactly as `text` wrote it.
 * @param text the command's JSON text, which `id` was parsed from.
 */
export function idAsWritten(id: unknown, text: string): unknown {
  if (typeof id !== 'number' || Number.isSafeInteger(id)) return id;
  const source = topLevelNumberSource(text, 'id');
  return source === undefined ? id : exactNumber(source);
}
