/**
 * The link between the operation interfaces and their rule tables. The `@ts-expect-error`
 * lines are type-level tests: `npx tsc -p tsconfig.json` fails if one of them stops being
 * an error, i.e. if `defineSpec` stopped catching a table that disagrees with its interface.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { number, optional, phone, required, string, url } from '../../src/contract/field-rules.ts';
import {
  defineSpec,
  type Operation,
  type OperationOf,
  operationSpecs,
  operationTypes,
  type SmsOperation,
  type TelegramOperation,
} from '../../src/contract/index.ts';

const common = { id: optional(number), phone: optional(phone), hook: optional(url) } as const;
const telegramFields = {
  ...common,
  id: required(number),
  phone: required(phone),
  message: required(string),
  telegram_lifetime: optional(number),
} as const;

test('defineSpec accepts a table that matches its interface', () => {
  const spec = defineSpec<TelegramOperation>()({ fields: telegramFields });
  assert.equal(spec.fields.message.required, true);
});

test('defineSpec rejects tables that disagree with the interface (compile time)', () => {
  const { message: _message, ...withoutMessage } = telegramFields;
  // A declared field without a rule.
  // @ts-expect-error message has no rule
  defineSpec<TelegramOperation>()({ fields: withoutMessage });
  // A required field marked optional.
  // @ts-expect-error message is required in TelegramOperation
  defineSpec<TelegramOperation>()({ fields: { ...telegramFields, message: optional(string) } });
  // An optional field marked required.
  const lifetimeRequired = { ...telegramFields, telegram_lifetime: required(number) } as const;
  // @ts-expect-error telegram_lifetime is optional in TelegramOperation
  defineSpec<TelegramOperation>()({ fields: lifetimeRequired });
  // A rule kind that does not fit the property's type.
  // @ts-expect-error message is a string, not a number
  defineSpec<TelegramOperation>()({ fields: { ...telegramFields, message: required(number) } });
  // @ts-expect-error id is a number, a URL rule does not fit
  defineSpec<TelegramOperation>()({ fields: { ...telegramFields, id: required(url) } });
  // A rule for a field the interface does not declare, even through a spread.
  const extra = { sms_message: required(string) } as const;
  // @ts-expect-error sms_message is not a field of TelegramOperation
  defineSpec<TelegramOperation>()({ fields: { ...telegramFields, ...extra } });
  assert.ok(true);
});

test('there is one rule table per operation type and nothing else', () => {
  assert.deepEqual(Object.keys(operationSpecs).sort(), [...operationTypes].sort());
});

test('OperationOf selects the interface of a type', () => {
  const sms: OperationOf<'sms'> = {
    type: 'sms',
    id: 1,
    phone: 79001234567,
    sms_message: 'hi',
    sms_signature: 'FERRY',
    extra: 'kept',
  } satisfies SmsOperation;
  const any: Operation = sms;
  // `type` narrows the union to the interface with its typed fields.
  assert.equal(any.type === 'sms' ? any.sms_message.length : 0, 2);
});
