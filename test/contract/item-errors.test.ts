import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import {
  ALPHA_NAME_ERROR,
  INSUFFICIENT_BALANCE,
  INVALID_MESSAGE_TYPE,
  itemErrorCode,
  knownItemErrors,
  MESSAGE_NOT_FOUND,
  MISSING_ERROR_TEXT,
} from '../../src/contract/index.ts';
import { errorCodes } from '../../src/pipeline/result.ts';
import { loadPublishedSchemas } from '../helpers/published-schemas.ts';

test('each known item error text has its own code; any other text the generic one', () => {
  assert.equal(itemErrorCode(ALPHA_NAME_ERROR), 'gateway_sender_rejected');
  assert.equal(itemErrorCode(INVALID_MESSAGE_TYPE), 'gateway_invalid_type');
  assert.equal(itemErrorCode(INSUFFICIENT_BALANCE), 'gateway_insufficient_balance');
  assert.equal(itemErrorCode(MESSAGE_NOT_FOUND), 'gateway_message_not_found');
  assert.equal(itemErrorCode(` ${ALPHA_NAME_ERROR}\n`), 'gateway_sender_rejected');
  // A near miss is not guessed at: a wrong reason is worse than the generic one.
  assert.equal(itemErrorCode('error in alpha-name'), 'gateway_item_error');
  assert.equal(itemErrorCode('Error in Alpha-name: FERRY'), 'gateway_item_error');
  assert.equal(itemErrorCode(MISSING_ERROR_TEXT), 'gateway_item_error');
  assert.equal(itemErrorCode(''), 'gateway_item_error');
});

test('the codes are distinct, result codes, and in the published result schema', async () => {
  const codes = knownItemErrors.map((known) => known.code);
  assert.equal(new Set(codes).size, codes.length);
  assert.equal(new Set(knownItemErrors.map((known) => known.text)).size, codes.length);
  const result = (await loadPublishedSchemas()).validator('result.schema.json');
  for (const code of [...codes, 'gateway_item_error']) {
    assert.ok((errorCodes as readonly string[]).includes(code), code);
    const record = {
      success: false,
      error: 'x',
      code,
      stage: 'upstream',
      transport: 'sync',
      attempts: 1,
      completed_at: '2026-11-27T05:00:00.000Z',
    };
    assert.ok(result(record), `${code} passes the published schema`);
  }
});

test("the README's table of result codes lists every item error code with its text", async () => {
  const readme = await readFile(join(import.meta.dirname, '../../README.md'), 'utf8');
  for (const known of knownItemErrors) {
    const row = readme.split('\n').find((line) => line.startsWith(`| \`${known.code}\` |`));
    assert.ok(row, `README has a row for ${known.code}`);
    assert.ok(row.includes(`\`${known.text}\``), `${known.code}'s row names its text`);
  }
});
