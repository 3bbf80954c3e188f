/**
 * How many billed parts a text takes. The spec leaves "maximum message length and
 * characters per part" not shown (spec: Limits), so the emulator uses the usual
 * SMS segmentation rule and documents it (docs/emulator.md):
 * - a text made only of GSM 03.38 characters counts septets (the extension
 *   characters `^{}\[~]|€` and form feed take two): one part up to 160, else 153 per part;
 * - any other text counts UTF-16 code units: one part up to 70, else 67 per part;
 * - an empty text is one part.
 */
export function countParts(text: string): number {
  const septets = gsmSeptets(text);
  if (septets !== undefined) return septets <= 160 ? 1 : Math.ceil(septets / 153);
  return text.length <= 70 ? 1 : Math.ceil(text.length / 67);
}

const GSM_BASIC =
  '@£$¥èéùìòÇ\nØø\rÅåΔ_ΦΓΛΩΠΨΣΘΞÆæßÉ !"#¤%&\'()*+,-./0123456789:;<=>?' +
  '¡ABCDEFGHIJKLMNOPQRSTUVWXYZÄÖÑÜ§¿abcdefghijklmnopqrstuvwxyzäöñüà';
const GSM_EXTENSION = '^{}\\[~]|€\f';

const basicSet = new Set(GSM_BASIC);
const extensionSet = new Set(GSM_EXTENSION);

/** Septets per ASCII code (0: not in GSM-7), so the common case is one array read per character. */
const asciiSeptets = new Uint8Array(128);
for (let code = 0; code < 128; code += 1) {
  const char = String.fromCharCode(code);
  asciiSeptets[code] = basicSet.has(char) ? 1 : extensionSet.has(char) ? 2 : 0;
}

/** Septet count of a GSM-7 text, or undefined when a character is outside GSM-7. */
function gsmSeptets(text: string): number | undefined {
  let septets = 0;
  for (let index = 0; index < text.length; index += 1) {
    const code = text.charCodeAt(index);
    const ascii = code < 128 ? asciiSeptets[code] : undefined;
    if (ascii !== undefined) {
      if (ascii === 0) return undefined;
      septets += ascii;
      continue;
    }
    // Every non-ASCII GSM character is a single UTF-16 code unit.
    const char = text.charAt(index);
    if (basicSet.has(char)) septets += 1;
    else if (extensionSet.has(char)) septets += 2;
    else return undefined;
  }
  return septets;
}
