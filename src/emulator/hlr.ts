/** A network as the HLR result shows it (spec: HLR result, network.origin / network.ported). */
export interface HlrNetworkRecord {
  readonly name: string;
  readonly prefix: number;
  readonly country: { readonly name: string; readonly prefix: number };
}

/** The `hlr` payload (spec: HLR result). */
export interface HlrRecord {
  readonly phone: number;
  readonly status: string;
  readonly imsi: number;
  readonly mccmnc: number;
  readonly ported: boolean;
  readonly network: { readonly origin: HlrNetworkRecord; readonly ported: HlrNetworkRecord };
}

interface Country {
  readonly callingCode: string;
  readonly name: string;
  readonly mcc: number;
}

// A few countries so results look real; anything else is reported as an unknown country.
const countries: readonly Country[] = [
  { callingCode: '380', name: 'Ukraine', mcc: 255 },
  { callingCode: '44', name: 'United Kingdom', mcc: 234 },
  { callingCode: '49', name: 'Germany', mcc: 262 },
  { callingCode: '48', name: 'Poland', mcc: 260 },
  { callingCode: '33', name: 'France', mcc: 208 },
  { callingCode: '34', name: 'Spain', mcc: 214 },
  { callingCode: '39', name: 'Italy', mcc: 222 },
  { callingCode: '1', name: 'United States', mcc: 310 },
];
const unknownCountry: Country = { callingCode: '0', name: 'Unknown', mcc: 901 };

/**
 * Looks a number up. The answer is a pure function of the number (so repeated
 * lookups agree): status `DELIVERED` (spec: States, "HLR result status"), about one
 * number in five reported ported to another network of the same country.
 */
export function lookupHlr(phone: number): HlrRecord {
  const digits = String(phone);
  const country =
    countries.find((candidate) => digits.startsWith(candidate.callingCode)) ?? unknownCountry;
  const national = digits.slice(country.callingCode.length);
  const hash = hashDigits(digits);
  const originMnc = 1 + (hash % 3);
  const ported = hash % 5 === 0;
  const currentMnc = ported ? 1 + ((originMnc + (hash % 2)) % 3) : originMnc;
  const mccmnc = country.mcc * 100 + currentMnc;
  const msin = Number(national.padStart(10, '0').slice(-10));
  return {
    phone,
    status: 'DELIVERED',
    imsi: mccmnc * 10_000_000_000 + msin,
    mccmnc,
    ported,
    network: {
      origin: network(country, originMnc, national),
      ported: network(country, currentMnc, national),
    },
  };
}

function network(country: Country, mnc: number, national: string): HlrNetworkRecord {
  return {
    name: `Emulated Mobile ${String.fromCharCode(64 + mnc)}`,
    prefix: Number(national.slice(0, 2) || '0'),
    country: { name: country.name, prefix: Number(country.callingCode) },
  };
}

function hashDigits(digits: string): number {
  let hash = 2166136261;
  for (let index = 0; index < digits.length; index += 1) {
    hash = Math.imul(hash ^ digits.charCodeAt(index), 16777619) >>> 0;
  }
  return hash;
}
