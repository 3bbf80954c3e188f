/**
 * The gateway's item error texts that ferry tells apart (spec: Errors), each with the
 * stable code a failed result carries for it, so a producer can act on the reason
 * without matching the gateway's wording. Texts are matched exactly (surrounding
 * whitespace aside): the gateway documents them as fixed strings, and a guess at a
 * reworded text could give a wrong reason, which is worse than the generic code.
 */
import { ALPHA_NAME_ERROR, INVALID_MESSAGE_TYPE } from './response.ts';

/**
 * Item error of a send the account's balance cannot cover. The gateway's documentation
 * shows no text for it; this is the emulator's, so a real gateway wording it otherwise
 * gets the generic code.
 */
export const INSUFFICIENT_BALANCE = 'Insufficient balance';
/**
 * Item error of `status` for an id the gateway does not know. Undocumented too: the
 * emulator's text.
 */
export const MESSAGE_NOT_FOUND = 'Message not found';

/** The code of an item error whose text is none of {@link knownItemErrors}. */
export const GENERIC_ITEM_ERROR_CODE = 'gateway_item_error';

/** One known text, its code, and what it means (for the README and the schemas). */
export interface KnownItemError {
  readonly text: string;
  readonly code: string;
  readonly meaning: string;
  /** The gateway's documentation names the text; false: the emulator's assumption. */
  readonly documented: boolean;
}

/** Every known item error; the README's table of codes lists the same. */
export const knownItemErrors = [
  {
    text: ALPHA_NAME_ERROR,
    code: 'gateway_sender_rejected',
    meaning: "the send's sender name (signature) is not one of the account's",
    documented: true,
  },
  {
    text: INVALID_MESSAGE_TYPE,
    code: 'gateway_invalid_type',
    meaning:
      'the gateway does not know the operation type (ferry refuses `whatsapp` before sending)',
    documented: true,
  },
  {
    text: INSUFFICIENT_BALANCE,
    code: 'gateway_insufficient_balance',
    meaning: "the account's balance does not cover the send",
    documented: false,
  },
  {
    text: MESSAGE_NOT_FOUND,
    code: 'gateway_message_not_found',
    meaning: 'a `status` lookup of an id the gateway does not know',
    documented: false,
  },
] as const satisfies readonly KnownItemError[];

/** The codes an item error can have: the known ones and {@link GENERIC_ITEM_ERROR_CODE}. */
export type ItemErrorCode =
  | (typeof knownItemErrors)[number]['code']
  | typeof GENERIC_ITEM_ERROR_CODE;

/** The specific codes, in table order (the generic one excluded). */
export const specificItemErrorCodes: readonly (typeof knownItemErrors)[number]['code'][] =
  knownItemErrors.map((known) => known.code);

const codeByText = new Map<string, ItemErrorCode>(
  knownItemErrors.map((known) => [known.text, known.code]),
);

/** The code of a failed item's `error` text; {@link GENERIC_ITEM_ERROR_CODE} for any other text. */
export function itemErrorCode(text: string): ItemErrorCode {
  return codeByText.get(text.trim()) ?? GENERIC_ITEM_ERROR_CODE;
}
