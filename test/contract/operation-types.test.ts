import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  hookOperationTypes,
  isOperationType,
  operationTypes,
  sendOperationTypes,
} from '../../src/contract/index.ts';

test('there are the 20 operation types of the spec', () => {
  assert.equal(operationTypes.length, 20);
  assert.equal(new Set(operationTypes).size, 20);
});

test('isOperationType accepts each type and nothing else', () => {
  for (const type of operationTypes) assert.equal(isOperationType(type), true);
  for (const value of ['whatsapp', 'SMS', '', 'template', 1, null, undefined, ['sms']]) {
    assert.equal(isOperationType(value), false, String(value));
  }
});

test('hook types are the Events list without pipeline', () => {
  assert.deepEqual([...hookOperationTypes].sort(), [
    'rcs',
    'rcs+sms',
    'rcs+viber+sms',
    'sms',
    'telegram',
    'viber',
  ]);
});

test('send types are the message sends; call/otp and queries are not', () => {
  for (const type of [
    'sms',
    'viber',
    'viber+sms',
    'rcs',
    'rcs+sms',
    'rcs+viber+sms',
    'telegram',
    'voice',
    'pipeline',
  ] as const) {
    assert.equal(sendOperationTypes.has(type), true, type);
  }
  for (const type of [
    'call/otp',
    'balance',
    'hlr',
    'status',
    'sender',
    'template/create',
  ] as const) {
    assert.equal(sendOperationTypes.has(type), false, type);
  }
});
