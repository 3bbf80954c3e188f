import { ConfigError } from '../errors.ts';
import type { EmulatorOptions } from './emulator.ts';
import { type EmulatorKnobs, knobEnvName, knobNames } from './knobs.ts';

/** Default port of `npm run emulator`. */
export const DEFAULT_EMULATOR_PORT = 8090;

/**
 * Reads the emulator's options from the environment (docs/emulator.md):
 * `EMULATOR_API_KEY` (required), `EMULATOR_PORT` [8090], `EMULATOR_HOST` [127.0.0.1],
 * `EMULATOR_SENDERS` (comma list) [ferry,Acme], `EMULATOR_NOTIFICATION_URL`,
 * `EMULATOR_INITIAL_BALANCE`, `EMULATOR_CURRENCY`, `EMULATOR_PRICE_PER_PART`, `EMULATOR_SEED`,
 * and one variable per knob (`EMULATOR_LATENCY_MS`, `EMULATOR_HTTP500_RATE`, ...).
 * @throws ConfigError naming the variable when one is missing or invalid.
 */
export function emulatorOptionsFromEnv(
  env: Readonly<Record<string, string | undefined>>,
): EmulatorOptions {
  const apiKey = env.EMULATOR_API_KEY?.trim();
  if (apiKey === undefined || apiKey === '') {
    throw new ConfigError(
      'EMULATOR_API_KEY',
      'required: the account key that requests must carry as `auth`',
    );
  }
  const options: EmulatorOptions = {
    apiKey,
    port: integer(env, 'EMULATOR_PORT', 0, 65_535) ?? DEFAULT_EMULATOR_PORT,
    host: text(env, 'EMULATOR_HOST') ?? '127.0.0.1',
  };
  const senders = text(env, 'EMULATOR_SENDERS');
  if (senders !== undefined) {
    options.senders = senders
      .split(',')
      .map((name) => name.trim())
      .filter((name) => name !== '');
  }
  const notificationUrl = text(env, 'EMULATOR_NOTIFICATION_URL');
  if (notificationUrl !== undefined) {
    const url = URL.parse(notificationUrl);
    if (url === null || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      throw new ConfigError('EMULATOR_NOTIFICATION_URL', 'must be an absolute http(s) URL');
    }
    options.notificationUrl = notificationUrl;
  }
  const initialBalance = decimal(env, 'EMULATOR_INITIAL_BALANCE');
  if (initialBalance !== undefined) options.initialBalance = initialBalance;
  const pricePerPart = decimal(env, 'EMULATOR_PRICE_PER_PART');
  if (pricePerPart !== undefined) options.pricePerPart = pricePerPart;
  const currency = text(env, 'EMULATOR_CURRENCY');
  if (currency !== undefined) options.currency = currency;
  const seed = integer(env, 'EMULATOR_SEED', 0, 2 ** 32 - 1);
  if (seed !== undefined) options.seed = seed;
  const knobs: Partial<EmulatorKnobs> = {};
  for (const name of knobNames) {
    const variable = knobEnvName(name);
    const value = decimal(env, variable);
    if (value === undefined) continue;
    if (name.endsWith('Rate') && value > 1)
      throw new ConfigError(variable, 'must be between 0 and 1');
    knobs[name] = value;
  }
  options.knobs = knobs;
  return options;
}

function text(env: Readonly<Record<string, string | undefined>>, name: string): string | undefined {
  const value = env[name]?.trim();
  return value === undefined || value === '' ? undefined : value;
}

function decimal(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
): number | undefined {
  const value = text(env, name);
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isFinite(number) || number < 0) throw new ConfigError(name, 'must be a number >= 0');
  return number;
}

function integer(
  env: Readonly<Record<string, string | undefined>>,
  name: string,
  min: number,
  max: number,
): number | undefined {
  const value = text(env, name);
  if (value === undefined) return undefined;
  const number = Number(value);
  if (!Number.isInteger(number) || number < min || number > max) {
    throw new ConfigError(name, `must be an integer between ${min} and ${max}`);
  }
  return number;
}
