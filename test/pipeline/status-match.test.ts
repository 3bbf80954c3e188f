import assert from 'node:assert/strict';
import { test } from 'node:test';
import { idTakenError, matchStatusRecord } from '../../src/pipeline/status-match.ts';

test('a status record matches the command with its id and a channel its type can use', () => {
  assert.equal(matchStatusRecord('sms', 7, { id: 7, type: 'sms' }), 'match');
  assert.equal(matchStatusRecord('sms', 7, { id: '7', type: 'sms' }), 'match', 'id as text');
  assert.equal(matchStatusRecord('rcs+sms', 7, { id: 7, type: 'sms' }), 'match', 'fallback');
  assert.equal(matchStatusRecord('call/otp', 7, { id: 7, type: 'voice' }), 'match');
  assert.equal(matchStatusRecord('pipeline', 7, { id: 7, type: 'whatsapp' }), 'match');
  assert.equal(matchStatusRecord('sms', 7, { msg_id: 'x' }), 'match', 'fields absent: id decides');
});

test('a record of another id or channel is another command', () => {
  assert.equal(matchStatusRecord('sms', 7, { id: 8, type: 'sms' }), 'other-command');
  assert.equal(matchStatusRecord('sms', 7, { id: 7, type: 'viber' }), 'other-command');
  assert.equal(matchStatusRecord('viber', 7, { id: 7, type: 'voice' }), 'other-command');
  assert.equal(matchStatusRecord('sms', 7, null), 'other-command');
  assert.equal(matchStatusRecord('sms', 7, 'DELIVERED'), 'other-command');
});

test('the refusal names the id and the channel found', () => {
  assert.equal(
    idTakenError(7, { id: 7, type: 'viber' }),
    'id 7 is already used at the gateway by another message (a viber message); not sent',
  );
});
