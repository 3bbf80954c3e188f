/**
 * The well-formed part of a chaos run: N commands of mixed types with unique numeric
 * ids, keyed by String(id) as applications produce them. Most are SMS; some Viber, RCS+SMS,
 * Telegram, pipeline, HLR and balance lookups, SMS over the async endpoint, and a
 * few the contract or the gateway refuses.
 */
import { isReconcilable } from '../../src/pipeline/send-intent.ts';
import { FIXTURE_PHONE, validOperations } from '../fixtures/operations.ts';
import type { SeededRandom } from './seeded-random.ts';

/** One command record the run produces, and what it expects of it. */
export interface PlannedRecord {
  readonly key: string;
  /** The record value; null is a tombstone. */
  readonly value: Buffer | null;
  readonly headers?: Readonly<Record<string, string>>;
  /** What the mix or the fuzz case calls it, for the report. */
  readonly label: string;
  /** The numeric id when the operation carries one a `status` lookup can find (a reconcilable send). */
  readonly reconcilableId?: string;
  /** The record is unreadable (not UTF-8 JSON, not an object): its result also goes to the dead-letter topic. */
  readonly expectDeadLetter: boolean;
}

/** First id of the well-formed commands; fuzz cases use ids from FUZZ_ID_BASE. */
export const COMMAND_ID_BASE = 1_000_000;

interface MixEntry {
  readonly label: string;
  readonly weight: number;
  readonly build: (id: number) => Record<string, unknown>;
  readonly headers?: Readonly<Record<string, string>>;
}

const copy = (name: keyof typeof validOperations, id: number): Record<string, unknown> => ({
  ...structuredClone(validOperations[name]),
  id,
});

/** Weights out of 100. */
const mix: readonly MixEntry[] = [
  { label: 'sms', weight: 60, build: (id) => ({ ...copy('sms', id), sms_message: `chaos ${id}` }) },
  {
    label: 'sms (async)',
    weight: 5,
    build: (id) => copy('sms', id),
    headers: { 'ferry-transport': 'async' },
  },
  { label: 'viber', weight: 8, build: (id) => copy('viber', id) },
  { label: 'rcs+sms', weight: 6, build: (id) => copy('rcs+sms', id) },
  { label: 'telegram', weight: 5, build: (id) => copy('telegram', id) },
  { label: 'pipeline', weight: 4, build: (id) => copy('pipeline', id) },
  { label: 'hlr', weight: 5, build: (id) => ({ type: 'hlr', id, phone: FIXTURE_PHONE }) },
  // An id on a balance lookup is allowed and keeps the key String(id); balance is never reconciled.
  { label: 'balance', weight: 3, build: (id) => ({ type: 'balance', id }) },
  // Contract failures: never sent, a `validation` result.
  {
    label: 'invalid (no phone)',
    weight: 2,
    build: (id) => ({ type: 'sms', id, sms_message: 'x', sms_signature: 'FERRY' }),
  },
  // Valid for the contract, refused by the gateway: an `upstream` failure.
  {
    label: 'refused (unknown sender)',
    weight: 2,
    build: (id) => ({ ...copy('sms', id), sms_signature: 'NOBODY' }),
  },
];

const totalWeight = mix.reduce((sum, entry) => sum + entry.weight, 0);

function pickEntry(random: SeededRandom): MixEntry {
  let roll = random.next() * totalWeight;
  for (const entry of mix) {
    roll -= entry.weight;
    if (roll < 0) return entry;
  }
  return mix[0] as MixEntry;
}

/** `count` well-formed command records with ids COMMAND_ID_BASE, COMMAND_ID_BASE + 1, … */
export function buildCommandMix(count: number, random: SeededRandom): PlannedRecord[] {
  const records: PlannedRecord[] = [];
  for (let index = 0; index < count; index += 1) {
    const id = COMMAND_ID_BASE + index;
    const entry = pickEntry(random);
    const operation = entry.build(id);
    const type = operation.type;
    const reconcilable =
      entry.label !== 'invalid (no phone)' &&
      typeof type === 'string' &&
      isReconcilable(type as Parameters<typeof isReconcilable>[0], id);
    records.push({
      key: String(id),
      value: Buffer.from(JSON.stringify(operation)),
      label: entry.label,
      expectDeadLetter: false,
      ...(entry.headers ? { headers: entry.headers } : {}),
      ...(reconcilable ? { reconcilableId: String(id) } : {}),
    });
  }
  return records;
}
