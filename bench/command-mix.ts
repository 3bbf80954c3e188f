/**
 * The commands the benchmark produces: a realistic mix of send operations
 * (mostly `sms`, some `viber`, `rcs+sms`, `telegram`, `pipeline`) and a few invalid
 * ones, each a deterministic function of its unique id, keyed by `String(id)`
 * as applications produce them. No `hook` is set: the emulator would post callbacks to it,
 * and a benchmark must not reach beyond loopback.
 */

/** The emulator's senders must include these two names (EMULATOR_SENDERS). */
export const BENCH_SENDER = 'FERRY';
export const BENCH_RCS_SENDER = 'FERRY RCS';

/** One command record ready to produce. */
export interface BenchCommand {
  readonly key: string;
  readonly value: string;
}

/** Share of each kind, in percent of the mix (sums to 100). */
export const commandMixPercent = {
  sms: 70,
  viber: 10,
  'rcs+sms': 7,
  telegram: 6,
  pipeline: 5,
  'invalid-rule': 1,
  'invalid-json': 1,
} as const;

export type CommandKind = keyof typeof commandMixPercent;

const kindByPercentile: CommandKind[] = Object.entries(commandMixPercent).flatMap(
  ([kind, percent]) => new Array<CommandKind>(percent).fill(kind as CommandKind),
);

/** The kind of command the mix gives to `id`: a fixed pattern of 100, shuffled by a multiplier. */
export function kindOf(id: number): CommandKind {
  // 37 is coprime with 100, so every window of 100 consecutive ids holds the exact mix.
  return kindByPercentile[(id * 37) % 100] ?? 'sms';
}

function phoneOf(id: number): number {
  return 380_500_000_000 + (id % 10_000_000);
}

const texts = [
  'Your code is 4821',
  'Your order 1042 has shipped and will arrive tomorrow between 9:00 and 13:00.',
  'Ваш код підтвердження: 4821. Нікому його не повідомляйте.',
  'Reminder: your appointment is on Friday at 10:30. Reply STOP to opt out.',
];

function textOf(id: number): string {
  return texts[id % texts.length] ?? 'Hello';
}

function operationOf(id: number, kind: CommandKind): Record<string, unknown> {
  const phone = phoneOf(id);
  switch (kind) {
    case 'sms':
    case 'invalid-json':
      return { type: 'sms', id, phone, sms_message: textOf(id), sms_signature: BENCH_SENDER };
    case 'viber':
      return {
        type: 'viber',
        id,
        phone,
        viber_type: 'text',
        viber_signature: BENCH_SENDER,
        viber_message: textOf(id),
        viber_lifetime: 3600,
      };
    case 'rcs+sms':
      return {
        type: 'rcs+sms',
        id,
        phone,
        rcs_message: textOf(id),
        rcs_signature: BENCH_RCS_SENDER,
        rcs_image: 'https://cdn.example.com/parcel.png',
        rcs_button: 'Track',
        rcs_link: `https://shop.example.com/track/${id}`,
        sms_message: textOf(id),
        sms_signature: BENCH_SENDER,
      };
    case 'telegram':
      return { type: 'telegram', id, phone, message: String(100_000 + (id % 900_000)) };
    case 'pipeline':
      return {
        type: 'pipeline',
        id,
        phone,
        pipeline: ['telegram', 'viber', 'sms'],
        telegram: { message: '4821' },
        viber: { message: 'Your code is 4821', signature: BENCH_SENDER, type: 'text' },
        sms: { message: 'Your code is 4821', signature: BENCH_SENDER },
      };
    case 'invalid-rule':
      // Breaks a rule of the spec (sms without its text): ferry answers it at stage validation.
      return { type: 'sms', id, phone, sms_signature: BENCH_SENDER };
  }
}

/** The command with this id, as produced. */
export function benchCommand(id: number): BenchCommand {
  const kind = kindOf(id);
  const json = JSON.stringify(operationOf(id, kind));
  // Truncated JSON: not readable at all, so ferry also dead-letters it.
  const value = kind === 'invalid-json' ? json.slice(0, json.length - 7) : json;
  return { key: String(id), value };
}

/** `count` commands with the consecutive ids `firstId`, `firstId + 1`, … */
export function benchCommands(firstId: number, count: number): BenchCommand[] {
  const commands = new Array<BenchCommand>(count);
  for (let i = 0; i < count; i++) commands[i] = benchCommand(firstId + i);
  return commands;
}
