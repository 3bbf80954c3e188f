import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { FerryError } from '../../src/errors.ts';
import { createLogger, type LoggerOptions, maskPhone } from '../../src/observability/logger.ts';

const API_KEY = 'k3y-0f-the-account-7f1c9d';
const CALLBACK_TOKEN = 'cb/token+with=chars';
const PHONE = 380501234567;

/** A logger whose JSON lines are collected in memory. */
function capture(options: Omit<LoggerOptions, 'destination'> = {}) {
  const lines: string[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
      done();
    },
  });
  const logger = createLogger({ secrets: [API_KEY, CALLBACK_TOKEN], ...options, destination });
  const records = () => lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  return { logger, lines, records };
}

function sms(): Record<string, unknown> {
  return {
    type: 'sms',
    id: 17,
    phone: PHONE,
    sms_message: 'Your code is 4821',
    sms_signature: 'Shop',
  };
}

test('maskPhone keeps the country code and the last four digits', () => {
  assert.equal(maskPhone(380501234567), '380*****4567');
  assert.equal(maskPhone('380501234567'), '380*****4567');
  assert.equal(maskPhone('+380 (50) 123-45-67'), '380*****4567');
  assert.equal(maskPhone(12025550123), '120****0123');
  assert.equal(maskPhone(4915112345678n), '491******5678');
});

test('maskPhone hides short and malformed values', () => {
  assert.equal(maskPhone(5012345678), '50******78');
  assert.equal(maskPhone('1234567'), '*****67');
  assert.equal(maskPhone('12'), '**');
  assert.equal(maskPhone('call me at home'), '[masked]');
  assert.equal(maskPhone({ number: 1 }), '[masked]');
  assert.equal(maskPhone(1.5e30), '[masked]');
  assert.equal(maskPhone(undefined), '[none]');
  assert.equal(maskPhone(null), '[none]');
});

test('logger writes JSON lines with level names, time and component', () => {
  const { logger, records } = capture();
  logger.child({ component: 'pipeline' }).info({ partition: 3 }, 'Envelope sent.');
  const [line] = records();
  assert.equal(line?.level, 'info');
  assert.equal(line?.component, 'pipeline');
  assert.equal(line?.partition, 3);
  assert.equal(line?.msg, 'Envelope sent.');
  assert.equal(line?.service, 'ferry');
  assert.match(String(line?.time), /^\d{4}-\d\d-\d\dT/);
});

test('logger honours the level and refuses an unknown one', () => {
  const { logger, records } = capture({ level: 'warn' });
  logger.info('not written');
  logger.warn('written');
  assert.deepEqual(
    records().map((line) => line.msg),
    ['written'],
  );
  assert.throws(
    () => createLogger({ level: 'verbose' }),
    (error: unknown) => error instanceof FerryError && error.code === 'config',
  );
});

test('logger masks phone fields at any depth and drops message texts at info', () => {
  const { logger, lines, records } = capture();
  logger.info({ command: sms() }, 'Command accepted.');
  logger.info(
    { operation: sms(), envelope: { data: [sms(), { ...sms(), phone: '380671112233' }] } },
    'x',
  );
  logger.warn({ phone: PHONE, phones: [PHONE, 380671112233] }, 'y');
  const text = lines.join('\n');
  assert.doesNotMatch(text, /380501234567|380671112233/);
  assert.doesNotMatch(text, /Your code is/);
  const [first, second, third] = records();
  assert.deepEqual(first?.command, {
    type: 'sms',
    id: 17,
    phone: '380*****4567',
    sms_message: '[omitted]',
    sms_signature: 'Shop',
  });
  assert.equal((second?.operation as Record<string, unknown> | undefined)?.phone, '380*****4567');
  assert.deepEqual(third?.phones, ['380*****4567', '380*****2233']);
});

test('logger drops every kind of message text at info and above', () => {
  const { logger, lines } = capture();
  const texts = {
    viber_message: 'viber text',
    rcs_message: 'rcs text',
    message: 'telegram text',
    text: 'plain text',
    template: 'template text',
    sms: { message: 'pipeline sms text', signature: 'S' },
    replies: [{ message: 'reply text' }],
    value: Buffer.from('{"phone":380501234567}'),
    body: '{"sms_message":"raw body text"}',
  };
  logger.info({ operation: texts }, 'i');
  logger.error({ operation: texts }, 'e');
  assert.doesNotMatch(lines.join('\n'), / text"|380501234567/);
  assert.equal(lines.length, 2);
});

test('logger keeps message texts at debug, still masked and scrubbed', () => {
  const { logger, records } = capture({ level: 'debug' });
  logger.debug({ operation: { ...sms(), sms_message: `code 4821 for ${PHONE} ${API_KEY}` } }, 'd');
  logger.info({ operation: sms() }, 'i');
  const [debug, info] = records();
  const debugOperation = debug?.operation as Record<string, unknown>;
  assert.equal(debugOperation.sms_message, 'code 4821 for 380*****4567 [Redacted]');
  assert.equal(debugOperation.phone, '380*****4567');
  assert.equal((info?.operation as Record<string, unknown> | undefined)?.sms_message, '[omitted]');
});

test('logger redacts credential fields wherever they are', () => {
  const { logger, lines, records } = capture();
  logger.info(
    {
      auth: 'inline-key-1',
      envelope: { auth: 'inline-key-2', data: [] },
      config: {
        apiKey: 'inline-key-3',
        api_key: 'inline-key-4',
        nested: { token: 'inline-key-5' },
      },
      headers: { authorization: 'Bearer inline-key-6', 'content-type': 'application/json' },
      request: { body: { auth: 'inline-key-7' } },
    },
    'Config loaded.',
  );
  assert.doesNotMatch(lines.join('\n'), /inline-key/);
  const [line] = records();
  assert.equal(line?.auth, '[Redacted]');
  assert.deepEqual(line?.headers, {
    authorization: '[Redacted]',
    'content-type': 'application/json',
  });
});

test('logger scrubs configured secret values out of messages, fields and errors', () => {
  const { logger, lines, records } = capture();
  logger.warn(`Gateway said no to key ${API_KEY}.`);
  logger.info(
    { url: `https://ferry.example/callbacks/${encodeURIComponent(CALLBACK_TOKEN)}` },
    'u',
  );
  const cause = new Error(`socket hang up (auth=${API_KEY})`);
  const error = new FerryError('transport', `POST failed for ${PHONE} with ${API_KEY}`, { cause });
  logger.error({ err: error }, 'Envelope failed.');
  logger.error(error);
  logger.error('printf %s style', `with ${API_KEY}`);
  const text = lines.join('\n');
  assert.equal(text.includes(API_KEY), false, text);
  assert.equal(text.includes(CALLBACK_TOKEN), false);
  assert.equal(text.includes(encodeURIComponent(CALLBACK_TOKEN)), false);
  assert.equal(text.includes(String(PHONE)), false);
  const [, , withErr, bareErr] = records();
  const err = withErr?.err as Record<string, unknown>;
  assert.equal(err.type, 'FerryError');
  assert.equal(err.code, 'transport');
  assert.equal(err.retryable, true);
  assert.equal(err.message, 'POST failed for 380*****4567 with [Redacted]');
  assert.match(String((err.cause as Record<string, unknown>).message), /auth=\[Redacted\]/);
  assert.equal(bareErr?.msg, 'POST failed for 380*****4567 with [Redacted]');
});

test('logger survives circular and deep values', () => {
  const { logger, records } = capture();
  const loop: Record<string, unknown> = { name: 'loop' };
  loop.self = loop;
  let deep: Record<string, unknown> = { phone: PHONE };
  for (let i = 0; i < 20; i += 1) deep = { deep };
  logger.info({ loop, deep }, 'odd shapes');
  const [line] = records();
  assert.deepEqual(line?.loop, { name: 'loop', self: '[circular]' });
  assert.doesNotMatch(JSON.stringify(line), /380501234567/);
});

test('logger writes to a file path', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-logger-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'logs', 'ferry.log');
  const logger = createLogger({ destination: file, secrets: [API_KEY] });
  logger.info({ phone: PHONE, auth: API_KEY }, `key ${API_KEY}`);
  logger.flush();
  const text = await readFile(file, 'utf8');
  assert.match(text, /"phone":"380\*\*\*\*\*4567"/);
  assert.equal(text.includes(API_KEY), false);
  assert.equal(text.includes(String(PHONE)), false);
});
