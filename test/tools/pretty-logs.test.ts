import assert from 'node:assert/strict';
import { PassThrough, Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from '../../src/observability/logger.ts';
import { prettyLogLines } from '../../tools/pretty-logs.ts';

const API_KEY = 'k3y-0f-the-account-7f1c9d';
const PHONE = 380501234567;

/** ferry's real logger writing into the prettifier, as `make run` wires them. */
async function prettyOutput(log: (logger: ReturnType<typeof createLogger>) => void) {
  const json = new PassThrough();
  const chunks: string[] = [];
  const terminal = new Writable({
    write(chunk: Buffer, _encoding, done) {
      chunks.push(chunk.toString('utf8'));
      done();
    },
  });
  const copied = prettyLogLines(json, terminal, { colorize: false });
  const raw: string[] = [];
  json.on('data', (chunk: Buffer) => raw.push(chunk.toString('utf8')));
  log(createLogger({ secrets: [API_KEY], destination: json }));
  json.end();
  await copied;
  return { pretty: chunks.join(''), json: raw.join('') };
}

test('make run shows ferry lines readable: time, level, component and message, fields indented', async () => {
  const { pretty } = await prettyOutput((logger) => {
    logger.child({ component: 'pipeline' }).warn({ partition: 3 }, 'partition stalled');
  });
  assert.match(
    pretty,
    /^\[\d\d:\d\d:\d\d\.\d{3}\] WARN: \[pipeline\] partition stalled\n {4}partition: 3\n$/,
  );
  assert.doesNotMatch(pretty, /"level"|hostname|"pid"/);
});

test('the readable lines hold no API key, token or phone number the JSON lines hid', async () => {
  const { pretty, json } = await prettyOutput((logger) => {
    logger.info(
      { config: { FERRY_API_KEY: API_KEY, auth: API_KEY }, command: { type: 'sms', phone: PHONE } },
      `configuration loaded with ${API_KEY}`,
    );
    logger.error({ err: new Error(`gateway refused ${API_KEY} for ${PHONE}`) }, 'send failed');
  });
  for (const output of [json, pretty]) {
    assert.ok(!output.includes(API_KEY), output);
    assert.ok(!output.includes(String(PHONE)), output);
  }
  assert.match(pretty, /380\*{5}4567/);
  assert.match(pretty, /INFO: configuration loaded/);
  assert.match(pretty, /ERROR: send failed/);
});

test('a line that is not JSON (a crash before the logger) is passed through unchanged', async () => {
  const input = new PassThrough();
  const chunks: string[] = [];
  const copied = prettyLogLines(
    input,
    new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString('utf8'));
        done();
      },
    }),
    { colorize: false },
  );
  input.end('node:internal/modules/run_main: boom\n');
  await copied;
  assert.equal(chunks.join(''), 'node:internal/modules/run_main: boom\n');
});
