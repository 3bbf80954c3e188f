import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import {
  bracketPath,
  INVALID_MESSAGE_TYPE,
  type OperationType,
  operationTypes,
  type RuleName,
  type ValidationResult,
  validateEnvelopeShape,
  validateOperation,
  validateStatusCallback,
  viberTypes,
} from '../../src/contract/index.ts';
import { validOperations } from '../fixtures/operations.ts';

/** A table row: `fails` absent means the value must pass. */
interface Case {
  readonly name: string;
  readonly value: unknown;
  readonly fails?: { readonly field: string; readonly rule: RuleName; readonly message?: string };
}

/** A copy of the fixture of `type` with fields set (`undefined` deletes the field). */
function op(type: OperationType, patch: Record<string, unknown> = {}): Record<string, unknown> {
  const copy: Record<string, unknown> = { ...validOperations[type] };
  for (const [key, value] of Object.entries(patch)) {
    if (value === undefined) delete copy[key];
    else copy[key] = value;
  }
  return copy;
}

function assertCase(result: ValidationResult<unknown>, row: Case): void {
  if (row.fails === undefined) {
    assert.equal(result.ok, true, result.ok ? '' : `unexpected failure: ${result.message}`);
    return;
  }
  assert.equal(result.ok, false, 'expected a failure');
  if (result.ok) return;
  assert.equal(result.field, row.fails.field);
  assert.equal(result.rule, row.fails.rule);
  const message = row.fails.message;
  if (message !== undefined) assert.equal(result.message, message);
  // The message names the field, then the rule text; the gateway's own texts stay verbatim.
  if (result.field !== '' && result.message !== INVALID_MESSAGE_TYPE)
    assert.ok(result.message.startsWith(`${result.field}: `));
}

function runTable(
  title: string,
  rows: readonly Case[],
  check: (value: unknown) => ValidationResult<unknown>,
): void {
  describe(title, () => {
    for (const row of rows) {
      test(row.name, () => assertCase(check(row.value), row));
    }
  });
}

const PHONE_TEXT =
  'phone: must be an integer in international format, digits only, at most 15 digits';

runTable(
  'validateOperation: the object and its type',
  [
    {
      name: 'null is not an operation',
      value: null,
      fails: { field: '', rule: 'not_object', message: 'operation must be a JSON object' },
    },
    {
      name: 'an array is not an operation',
      value: [validOperations.sms],
      fails: { field: '', rule: 'not_object' },
    },
    {
      name: 'a JSON string is not an operation',
      value: '{"type":"sms"}',
      fails: { field: '', rule: 'not_object' },
    },
    {
      name: 'type is required',
      value: op('sms', { type: undefined }),
      fails: { field: 'type', rule: 'required', message: 'type: is required' },
    },
    {
      name: 'type must be a string',
      value: op('sms', { type: 1 }),
      fails: { field: 'type', rule: 'json_type', message: 'type: must be a string' },
    },
    {
      name: 'whatsapp as a type fails with exactly the gateway text, no field prefix',
      value: { type: 'whatsapp', id: 1, phone: 79001234567 },
      fails: { field: 'type', rule: 'invalid_type', message: INVALID_MESSAGE_TYPE },
    },
    {
      name: 'an unknown type fails and lists the allowed ones',
      value: op('sms', { type: 'mms' }),
      fails: {
        field: 'type',
        rule: 'invalid_type',
        message: `type: must be one of ${operationTypes.join(', ')}`,
      },
    },
    {
      name: 'type is case-sensitive',
      value: op('sms', { type: 'SMS' }),
      fails: { field: 'type', rule: 'invalid_type' },
    },
    {
      name: 'unknown extra properties pass',
      value: op('sms', { campaign: 'spring', meta: { a: [1] } }),
    },
  ],
  validateOperation,
);

describe('validateOperation: the fixture of every operation type', () => {
  for (const type of operationTypes) {
    test(`${type} fixture passes`, () =>
      assertCase(validateOperation(validOperations[type]), { name: type, value: null }));
  }
  test('a passing operation is returned as the same object, untouched', () => {
    const value = op('rcs+viber+sms', { extra: { nested: true } });
    const before = JSON.stringify(value);
    const result = validateOperation(value);
    assert.equal(result.ok, true);
    if (result.ok) assert.equal(result.value, value);
    assert.equal(JSON.stringify(value), before);
  });
});

runTable(
  'validateOperation: common fields id, phone, hook',
  [
    { name: 'id as a number passes', value: op('sms', { id: 5.5 }) },
    {
      name: 'id as a numeric string fails',
      value: op('sms', { id: '1007' }),
      fails: { field: 'id', rule: 'json_type', message: 'id: must be a number' },
    },
    {
      name: 'id null fails (present, wrong type)',
      value: op('hlr', { id: null }),
      fails: { field: 'id', rule: 'json_type' },
    },
    { name: 'template/delete takes a string id', value: op('template/delete', { id: 'tpl-9' }) },
    {
      name: 'template/delete refuses a numeric id',
      value: op('template/delete', { id: 9 }),
      fails: { field: 'id', rule: 'json_type', message: 'id: must be a string' },
    },
    {
      name: 'an id on an undisclosed type must still be a number',
      value: op('voice', { id: 'x' }),
      fails: { field: 'id', rule: 'json_type' },
    },
    {
      name: 'an id on balance must be a number when present',
      value: op('balance', { id: 'x' }),
      fails: { field: 'id', rule: 'json_type' },
    },
    { name: 'phone of 15 digits passes', value: op('sms', { phone: 999_999_999_999_999 }) },
    { name: 'phone of 1 digit passes (no minimum stated)', value: op('sms', { phone: 7 }) },
    {
      name: 'phone of 16 digits fails',
      value: op('sms', { phone: 1_000_000_000_000_000 }),
      fails: { field: 'phone', rule: 'phone_format', message: PHONE_TEXT },
    },
    {
      name: 'phone as a string of digits fails',
      value: op('sms', { phone: '79001234567' }),
      fails: { field: 'phone', rule: 'phone_format' },
    },
    {
      name: 'phone with a plus sign fails',
      value: op('sms', { phone: '+79001234567' }),
      fails: { field: 'phone', rule: 'phone_format' },
    },
    {
      name: 'phone that is not an integer fails',
      value: op('sms', { phone: 7900123456.5 }),
      fails: { field: 'phone', rule: 'phone_format' },
    },
    {
      name: 'negative phone fails',
      value: op('sms', { phone: -79001234567 }),
      fails: { field: 'phone', rule: 'phone_format' },
    },
    {
      name: 'zero phone fails',
      value: op('sms', { phone: 0 }),
      fails: { field: 'phone', rule: 'phone_format' },
    },
    {
      name: 'phone beyond safe integers fails',
      value: op('sms', { phone: 2 ** 53 }),
      fails: { field: 'phone', rule: 'phone_format' },
    },
    {
      name: 'a phone on viber+sms is checked when present',
      value: op('viber+sms', { phone: '+1' }),
      fails: { field: 'phone', rule: 'phone_format' },
    },
    { name: 'hook with https passes', value: op('sms', { hook: 'https://a.example.com/cb?x=1' }) },
    {
      name: 'hook with http passes',
      value: op('sms', { hook: 'http://127.0.0.1:8080/callbacks/t' }),
    },
    {
      name: 'hook with an upper-case scheme passes',
      value: op('sms', { hook: 'HTTPS://a.example.com/' }),
    },
    {
      name: 'hook with another scheme fails',
      value: op('sms', { hook: 'ftp://a.example.com/' }),
      fails: { field: 'hook', rule: 'url', message: 'hook: must be an absolute http(s) URL' },
    },
    {
      name: 'relative hook fails',
      value: op('sms', { hook: '/callbacks/t' }),
      fails: { field: 'hook', rule: 'url' },
    },
    {
      name: 'hook without a host fails',
      value: op('sms', { hook: 'https://' }),
      fails: { field: 'hook', rule: 'url' },
    },
    {
      name: 'hook that is not a URL fails',
      value: op('sms', { hook: 'https://exa mple.com' }),
      fails: { field: 'hook', rule: 'url' },
    },
    {
      name: 'hook as a number fails',
      value: op('sms', { hook: 42 }),
      fails: { field: 'hook', rule: 'json_type' },
    },
    {
      name: 'hook is checked on every type',
      value: op('template/viber/list', { hook: 'nope' }),
      fails: { field: 'hook', rule: 'url' },
    },
  ],
  validateOperation,
);

runTable(
  'validateOperation: hlr, status, call/otp',
  [
    {
      name: 'hlr requires id',
      value: op('hlr', { id: undefined }),
      fails: { field: 'id', rule: 'required', message: 'id: is required' },
    },
    {
      name: 'hlr requires phone',
      value: op('hlr', { phone: undefined }),
      fails: { field: 'phone', rule: 'required' },
    },
    {
      name: 'hlr checks the phone format',
      value: op('hlr', { phone: '79001234567' }),
      fails: { field: 'phone', rule: 'phone_format' },
    },
    {
      name: 'status requires id',
      value: op('status', { id: undefined }),
      fails: { field: 'id', rule: 'required' },
    },
    { name: 'status takes no phone', value: op('status', { phone: undefined }) },
    {
      name: 'call/otp requires id',
      value: op('call/otp', { id: undefined }),
      fails: { field: 'id', rule: 'required' },
    },
    {
      name: 'call/otp requires phone',
      value: op('call/otp', { phone: undefined }),
      fails: { field: 'phone', rule: 'required' },
    },
  ],
  validateOperation,
);

runTable(
  'validateOperation: sms',
  [
    {
      name: 'sms requires id',
      value: op('sms', { id: undefined }),
      fails: { field: 'id', rule: 'required' },
    },
    {
      name: 'sms requires phone',
      value: op('sms', { phone: undefined }),
      fails: { field: 'phone', rule: 'required' },
    },
    {
      name: 'sms requires sms_message',
      value: op('sms', { sms_message: undefined }),
      fails: { field: 'sms_message', rule: 'required', message: 'sms_message: is required' },
    },
    {
      name: 'sms_message must be a string',
      value: op('sms', { sms_message: 5 }),
      fails: { field: 'sms_message', rule: 'json_type' },
    },
    {
      name: 'sms requires sms_signature',
      value: op('sms', { sms_signature: undefined }),
      fails: { field: 'sms_signature', rule: 'required' },
    },
    {
      name: 'sms_signature must be a string',
      value: op('sms', { sms_signature: ['a'] }),
      fails: { field: 'sms_signature', rule: 'json_type' },
    },
    { name: 'short_link true passes', value: op('sms', { short_link: true }) },
    {
      name: 'short_link must be a boolean',
      value: op('sms', { short_link: 1 }),
      fails: { field: 'short_link', rule: 'json_type', message: 'short_link: must be a boolean' },
    },
    { name: 'unsubscribe_link false passes', value: op('sms', { unsubscribe_link: false }) },
    {
      name: 'unsubscribe_link must be a boolean',
      value: op('sms', { unsubscribe_link: 'yes' }),
      fails: { field: 'unsubscribe_link', rule: 'json_type' },
    },
    { name: 'sms_lifetime of 3600 passes', value: op('sms', { sms_lifetime: 3600 }) },
    { name: 'sms_lifetime of 259200 passes', value: op('sms', { sms_lifetime: 259_200 }) },
    {
      name: 'sms_lifetime of 3599 fails',
      value: op('sms', { sms_lifetime: 3599 }),
      fails: {
        field: 'sms_lifetime',
        rule: 'range',
        message: 'sms_lifetime: must be between 3600 and 259200 seconds',
      },
    },
    {
      name: 'sms_lifetime of 259201 fails',
      value: op('sms', { sms_lifetime: 259_201 }),
      fails: { field: 'sms_lifetime', rule: 'range' },
    },
    {
      name: 'sms_lifetime as a string fails',
      value: op('sms', { sms_lifetime: '3600' }),
      fails: {
        field: 'sms_lifetime',
        rule: 'json_type',
        message: 'sms_lifetime: must be a number',
      },
    },
  ],
  validateOperation,
);

runTable(
  'validateOperation: telegram',
  [
    { name: 'a 4-digit password passes', value: op('telegram', { message: '0042' }) },
    { name: 'an 8-digit password passes', value: op('telegram', { message: '12345678' }) },
    {
      name: 'a 3-digit password fails',
      value: op('telegram', { message: '123' }),
      fails: { field: 'message', rule: 'pattern', message: 'message: must be 4 to 8 digits' },
    },
    {
      name: 'a 9-digit password fails',
      value: op('telegram', { message: '123456789' }),
      fails: { field: 'message', rule: 'pattern' },
    },
    {
      name: 'a password with a letter fails',
      value: op('telegram', { message: '12a4' }),
      fails: { field: 'message', rule: 'pattern' },
    },
    {
      name: 'a password with non-ASCII digits fails',
      value: op('telegram', { message: '١٢٣٤' }),
      fails: { field: 'message', rule: 'pattern' },
    },
    {
      name: 'a password as a number fails',
      value: op('telegram', { message: 1234 }),
      fails: { field: 'message', rule: 'json_type' },
    },
    {
      name: 'message is required',
      value: op('telegram', { message: undefined }),
      fails: { field: 'message', rule: 'required' },
    },
    {
      name: 'telegram requires id',
      value: op('telegram', { id: undefined }),
      fails: { field: 'id', rule: 'required' },
    },
    {
      name: 'telegram requires phone',
      value: op('telegram', { phone: undefined }),
      fails: { field: 'phone', rule: 'required' },
    },
    { name: 'telegram_lifetime of 60 passes', value: op('telegram', { telegram_lifetime: 60 }) },
    {
      name: 'telegram_lifetime has no stated maximum',
      value: op('telegram', { telegram_lifetime: 10_000_000 }),
    },
    {
      name: 'telegram_lifetime of 59 fails',
      value: op('telegram', { telegram_lifetime: 59 }),
      fails: {
        field: 'telegram_lifetime',
        rule: 'range',
        message: 'telegram_lifetime: must be at least 60 seconds',
      },
    },
  ],
  validateOperation,
);

const rcsRequired = [
  'id',
  'phone',
  'rcs_message',
  'rcs_signature',
  'rcs_image',
  'rcs_button',
  'rcs_link',
];

runTable(
  'validateOperation: rcs and rcs+sms',
  [
    ...rcsRequired.map((field) => ({
      name: `rcs requires ${field}`,
      value: op('rcs', { [field]: undefined }),
      fails: { field, rule: 'required' as const },
    })),
    ...rcsRequired.map((field) => ({
      name: `rcs+sms requires ${field}`,
      value: op('rcs+sms', { [field]: undefined }),
      fails: { field, rule: 'required' as const },
    })),
    {
      name: 'rcs+sms requires sms_message',
      value: op('rcs+sms', { sms_message: undefined }),
      fails: { field: 'sms_message', rule: 'required' },
    },
    {
      name: 'rcs+sms requires sms_signature',
      value: op('rcs+sms', { sms_signature: undefined }),
      fails: { field: 'sms_signature', rule: 'required' },
    },
    { name: 'rcs needs no sms_message', value: op('rcs', { sms_message: undefined }) },
    {
      name: 'rcs_message must be a string',
      value: op('rcs', { rcs_message: {} }),
      fails: { field: 'rcs_message', rule: 'json_type' },
    },
    {
      name: 'rcs_button must be a string',
      value: op('rcs', { rcs_button: true }),
      fails: { field: 'rcs_button', rule: 'json_type' },
    },
    {
      name: 'rcs_image must be an http(s) URL',
      value: op('rcs', { rcs_image: 'cdn.example.com/a.png' }),
      fails: {
        field: 'rcs_image',
        rule: 'url',
        message: 'rcs_image: must be an absolute http(s) URL',
      },
    },
    {
      name: 'rcs_link must be an http(s) URL',
      value: op('rcs+sms', { rcs_link: 'javascript:alert(1)' }),
      fails: { field: 'rcs_link', rule: 'url' },
    },
    { name: 'rcs_lifetime of 60 passes', value: op('rcs', { rcs_lifetime: 60 }) },
    {
      name: 'rcs_lifetime of 59 fails',
      value: op('rcs', { rcs_lifetime: 59 }),
      fails: {
        field: 'rcs_lifetime',
        rule: 'range',
        message: 'rcs_lifetime: must be at least 60 seconds',
      },
    },
    {
      name: 'rcs short_link must be a boolean',
      value: op('rcs', { short_link: 'true' }),
      fails: { field: 'short_link', rule: 'json_type' },
    },
    {
      name: 'sms_lifetime on rcs+sms is not a stated field and passes through',
      value: op('rcs+sms', { sms_lifetime: 1 }),
    },
  ],
  validateOperation,
);

/** The fields each viber_type requires (spec: rcs+viber+sms), with valid values. */
const viberFieldValues: Record<string, unknown> = {
  viber_message: 'Hello',
  viber_image: 'https://cdn.example.com/v.png',
  viber_link: 'https://shop.example.com/',
  viber_button: 'Open',
  viber_carousel: [
    {
      caption: 'A',
      image: 'https://cdn.example.com/a.png',
      url: 'https://shop.example.com/a',
      button: 'Buy',
    },
  ],
};
const requiredByViberType: Record<(typeof viberTypes)[number], readonly string[]> = {
  carousel: ['viber_carousel', 'viber_message'],
  image: ['viber_image'],
  text: ['viber_message'],
  'text+image+link': ['viber_button', 'viber_image', 'viber_link', 'viber_message'],
  'text+link': ['viber_button', 'viber_link', 'viber_message'],
};
/** An rcs+viber+sms operation of the given viber_type with exactly the fields it requires. */
function rvs(
  viberType: string,
  fields: readonly string[],
  patch: Record<string, unknown> = {},
): Record<string, unknown> {
  const base = op('rcs+viber+sms', {
    viber_message: undefined,
    viber_link: undefined,
    viber_button: undefined,
    viber_type: viberType,
  });
  for (const field of fields) base[field] = viberFieldValues[field];
  return { ...base, ...patch };
}

runTable(
  'validateOperation: rcs+viber+sms',
  [
    ...viberTypes.map((viberType) => ({
      name: `viber_type ${viberType} passes with its required fields`,
      value: rvs(viberType, requiredByViberType[viberType]),
    })),
    ...viberTypes.flatMap((viberType) =>
      requiredByViberType[viberType].map((missing) => ({
        name: `viber_type ${viberType} requires ${missing}`,
        value: rvs(
          viberType,
          requiredByViberType[viberType].filter((field) => field !== missing),
        ),
        fails: {
          field: missing,
          rule: 'required' as const,
          message: `${missing}: is required when viber_type is ${viberType}`,
        },
      })),
    ),
    {
      name: 'viber_type image does not require viber_message',
      value: rvs('image', ['viber_image']),
    },
    {
      name: 'an unknown viber_type fails',
      value: rvs('video', ['viber_message']),
      fails: {
        field: 'viber_type',
        rule: 'enum',
        message: 'viber_type: must be one of carousel, image, text, text+image+link, text+link',
      },
    },
    {
      name: 'viber_type is required',
      value: op('rcs+viber+sms', { viber_type: undefined }),
      fails: { field: 'viber_type', rule: 'required' },
    },
    {
      name: 'viber_type must be a string',
      value: op('rcs+viber+sms', { viber_type: 3 }),
      fails: { field: 'viber_type', rule: 'json_type' },
    },
    {
      name: 'viber_signature is required',
      value: op('rcs+viber+sms', { viber_signature: undefined }),
      fails: { field: 'viber_signature', rule: 'required' },
    },
    {
      name: 'the rcs fields are required too',
      value: op('rcs+viber+sms', { rcs_image: undefined }),
      fails: { field: 'rcs_image', rule: 'required' },
    },
    {
      name: 'the sms fields are required too',
      value: op('rcs+viber+sms', { sms_signature: undefined }),
      fails: { field: 'sms_signature', rule: 'required' },
    },
    {
      name: 'viber_image must be an http(s) URL',
      value: rvs('image', [], { viber_image: 'file:///etc/passwd' }),
      fails: { field: 'viber_image', rule: 'url' },
    },
    {
      name: 'viber_link must be an http(s) URL',
      value: rvs('text+link', ['viber_button', 'viber_message'], { viber_link: 'shop' }),
      fails: { field: 'viber_link', rule: 'url' },
    },
    {
      name: 'viber_button must be a string',
      value: rvs('text+link', ['viber_link', 'viber_message'], { viber_button: 1 }),
      fails: { field: 'viber_button', rule: 'json_type' },
    },
    {
      name: 'viber_carousel must be an array',
      value: rvs('carousel', ['viber_message'], { viber_carousel: {} }),
      fails: {
        field: 'viber_carousel',
        rule: 'json_type',
        message: 'viber_carousel: must be an array',
      },
    },
    {
      name: 'a carousel item must be an object',
      value: rvs('carousel', ['viber_message'], {
        viber_carousel: [viberFieldValues.viber_carousel, 'card'].flat(),
      }),
      fails: {
        field: 'viber_carousel.1',
        rule: 'not_object',
        message: 'viber_carousel.1: must be an object',
      },
    },
    {
      name: 'a carousel image must be an http(s) URL',
      value: rvs('carousel', ['viber_message'], { viber_carousel: [{ image: 'a.png' }] }),
      fails: {
        field: 'viber_carousel.0.image',
        rule: 'url',
        message: 'viber_carousel.0.image: must be an absolute http(s) URL',
      },
    },
    {
      name: 'a carousel caption must be a string',
      value: rvs('carousel', ['viber_message'], { viber_carousel: [{ caption: 1 }] }),
      fails: { field: 'viber_carousel.0.caption', rule: 'json_type' },
    },
  ],
  validateOperation,
);

runTable(
  'validateOperation: viber (requiredness and viber_type values not shown)',
  [
    { name: 'type alone passes', value: { type: 'viber' } },
    { name: 'any viber_type string passes', value: op('viber', { viber_type: 'anything' }) },
    {
      name: 'viber_type must be a string',
      value: op('viber', { viber_type: 1 }),
      fails: { field: 'viber_type', rule: 'json_type' },
    },
    {
      name: 'viber_signature must be a string',
      value: op('viber', { viber_signature: null }),
      fails: { field: 'viber_signature', rule: 'json_type' },
    },
    {
      name: 'viber_message must be a string',
      value: op('viber', { viber_message: 1 }),
      fails: { field: 'viber_message', rule: 'json_type' },
    },
    { name: 'viber_lifetime has no stated bounds', value: op('viber', { viber_lifetime: 1 }) },
    {
      name: 'viber_lifetime must be a number',
      value: op('viber', { viber_lifetime: '3600' }),
      fails: { field: 'viber_lifetime', rule: 'json_type' },
    },
    {
      name: 'short_link must be a boolean',
      value: op('viber', { short_link: 'no' }),
      fails: { field: 'short_link', rule: 'json_type' },
    },
    {
      name: 'a carousel item url is only typed as a string',
      value: op('viber', { viber_carousel: [{ url: 'not a url', caption: 'c', button: 'b' }] }),
    },
    {
      name: 'a carousel item image must be an http(s) URL',
      value: op('viber', { viber_carousel: [{ image: 'not a url' }] }),
      fails: { field: 'viber_carousel.0.image', rule: 'url' },
    },
    {
      name: 'a carousel item button must be a string',
      value: op('viber', { viber_carousel: [{ button: false }] }),
      fails: { field: 'viber_carousel.0.button', rule: 'json_type' },
    },
    {
      name: 'a carousel item url must be a string',
      value: op('viber', { viber_carousel: [{ url: 1 }] }),
      fails: { field: 'viber_carousel.0.url', rule: 'json_type' },
    },
  ],
  validateOperation,
);

const voice = { gender: 'female', language: 'en', name: 'en-US-1' };
const whatsapp = { message: '4821', signature: 'FERRY' };

runTable(
  'validateOperation: pipeline',
  [
    {
      name: 'all six channels with their objects pass',
      value: op('pipeline', {
        pipeline: ['voice', 'telegram', 'viber', 'rcs', 'sms', 'whatsapp'],
        voice,
        whatsapp,
        rcs: {},
      }),
    },
    {
      name: 'pipeline is required',
      value: op('pipeline', { pipeline: undefined }),
      fails: { field: 'pipeline', rule: 'required' },
    },
    {
      name: 'pipeline must be an array',
      value: op('pipeline', { pipeline: 'sms' }),
      fails: { field: 'pipeline', rule: 'json_type' },
    },
    {
      name: 'pipeline values must be strings',
      value: op('pipeline', { pipeline: ['sms', 1] }),
      fails: { field: 'pipeline.1', rule: 'json_type' },
    },
    {
      name: 'pipeline values come from the allowed set',
      value: op('pipeline', { pipeline: ['sms', 'email'] }),
      fails: {
        field: 'pipeline.1',
        rule: 'enum',
        message: 'pipeline.1: must be one of voice, telegram, viber, rcs, sms, whatsapp',
      },
    },
    {
      name: 'a pipeline value may not repeat',
      value: op('pipeline', { pipeline: ['sms', 'viber', 'sms'] }),
      fails: { field: 'pipeline.2', rule: 'duplicate', message: 'pipeline.2: must not repeat sms' },
    },
    {
      name: 'an empty pipeline fails: a request over no channel can deliver nothing',
      value: op('pipeline', { pipeline: [] }),
      fails: {
        field: 'pipeline',
        rule: 'min_items',
        message: 'pipeline: must have at least 1 item',
      },
    },
    {
      name: 'one channel is enough',
      value: op('pipeline', { pipeline: ['sms'] }),
    },
    {
      name: 'phone is required',
      value: op('pipeline', { phone: undefined }),
      fails: { field: 'phone', rule: 'required' },
    },
    {
      name: 'phone has the international format',
      value: op('pipeline', { phone: '+79001234567' }),
      fails: { field: 'phone', rule: 'phone_format' },
    },
    { name: 'a numeric id passes', value: op('pipeline', { id: 77 }) },
    {
      name: 'a non-numeric id fails',
      value: op('pipeline', { id: '77' }),
      fails: { field: 'id', rule: 'json_type' },
    },
    // Decision for spec pipeline rule 4 (see PipelineOperation): id is not required here.
    {
      name: 'id is optional (decision for pipeline rule 4)',
      value: op('pipeline', { id: undefined }),
    },
    {
      name: 'a named sms needs the sms object',
      value: op('pipeline', { sms: undefined }),
      fails: {
        field: 'sms',
        rule: 'required',
        message: 'sms: is required when pipeline names sms',
      },
    },
    {
      name: 'a named telegram needs the telegram object',
      value: op('pipeline', { telegram: undefined }),
      fails: { field: 'telegram', rule: 'required' },
    },
    {
      name: 'a named viber needs the viber object',
      value: op('pipeline', { viber: undefined }),
      fails: { field: 'viber', rule: 'required' },
    },
    {
      name: 'a named voice needs the voice object',
      value: op('pipeline', { pipeline: ['voice'] }),
      fails: { field: 'voice', rule: 'required' },
    },
    {
      name: 'a named whatsapp needs the whatsapp object',
      value: op('pipeline', { pipeline: ['whatsapp'] }),
      fails: { field: 'whatsapp', rule: 'required' },
    },
    {
      name: 'a named rcs does not need the rcs object (not shown)',
      value: op('pipeline', { pipeline: ['rcs'] }),
    },
    {
      name: 'channels not named need no object',
      value: op('pipeline', { pipeline: ['sms'], telegram: undefined, viber: undefined }),
    },
    {
      name: 'an object present for an unnamed channel is still checked',
      value: op('pipeline', { pipeline: ['sms'], voice: { gender: 'female' } }),
      fails: { field: 'voice.language', rule: 'required' },
    },
    {
      name: 'sms.message is required',
      value: op('pipeline', { sms: { signature: 'FERRY' } }),
      fails: { field: 'sms.message', rule: 'required', message: 'sms.message: is required' },
    },
    {
      name: 'sms.signature is required',
      value: op('pipeline', { sms: { message: 'hi' } }),
      fails: { field: 'sms.signature', rule: 'required' },
    },
    {
      name: 'sms must be an object',
      value: op('pipeline', { sms: 'hi' }),
      fails: { field: 'sms', rule: 'not_object', message: 'sms: must be an object' },
    },
    {
      name: 'telegram.message is required',
      value: op('pipeline', { telegram: {} }),
      fails: { field: 'telegram.message', rule: 'required' },
    },
    {
      name: 'telegram.message must be a string',
      value: op('pipeline', { telegram: { message: 4821 } }),
      fails: { field: 'telegram.message', rule: 'json_type' },
    },
    // Decision: the 4-to-8-digit rule belongs to the telegram operation (see PipelineTelegram).
    {
      name: 'telegram.message has no digit rule in a pipeline',
      value: op('pipeline', { telegram: { message: 'code 12' } }),
    },
    {
      name: 'viber.message is required',
      value: op('pipeline', { viber: { signature: 'FERRY', type: 'text' } }),
      fails: { field: 'viber.message', rule: 'required' },
    },
    {
      name: 'viber.signature is required',
      value: op('pipeline', { viber: { message: 'hi', type: 'text' } }),
      fails: { field: 'viber.signature', rule: 'required' },
    },
    {
      name: 'viber.type is required',
      value: op('pipeline', { viber: { message: 'hi', signature: 'FERRY' } }),
      fails: { field: 'viber.type', rule: 'required' },
    },
    {
      name: 'viber.type must be a string',
      value: op('pipeline', { viber: { message: 'hi', signature: 'FERRY', type: 1 } }),
      fails: { field: 'viber.type', rule: 'json_type' },
    },
    {
      name: 'voice.gender male passes',
      value: op('pipeline', { pipeline: ['voice'], voice: { ...voice, gender: 'male' } }),
    },
    {
      name: 'voice.gender must be male or female',
      value: op('pipeline', { pipeline: ['voice'], voice: { ...voice, gender: 'robot' } }),
      fails: {
        field: 'voice.gender',
        rule: 'enum',
        message: 'voice.gender: must be one of male, female',
      },
    },
    {
      name: 'voice.language is required',
      value: op('pipeline', { pipeline: ['voice'], voice: { ...voice, language: undefined } }),
      fails: { field: 'voice.language', rule: 'required' },
    },
    {
      name: 'voice.name is required',
      value: op('pipeline', { pipeline: ['voice'], voice: { gender: 'male', language: 'en' } }),
      fails: { field: 'voice.name', rule: 'required' },
    },
    {
      name: 'whatsapp fields are not validated (rule 5)',
      value: op('pipeline', { pipeline: ['whatsapp'], whatsapp: {} }),
    },
    {
      name: 'whatsapp must be an object',
      value: op('pipeline', { pipeline: ['whatsapp'], whatsapp: '4821' }),
      fails: { field: 'whatsapp', rule: 'not_object' },
    },
    {
      name: 'rcs must be an object when present',
      value: op('pipeline', { rcs: [] }),
      fails: { field: 'rcs', rule: 'not_object' },
    },
    {
      name: 'hook is checked as a URL',
      value: op('pipeline', { hook: 'callback' }),
      fails: { field: 'hook', rule: 'url' },
    },
  ],
  validateOperation,
);

runTable(
  'validateOperation: templates, account queries and undisclosed types',
  [
    {
      name: 'template/create requires template',
      value: op('template/create', { template: undefined }),
      fails: { field: 'template', rule: 'required' },
    },
    {
      name: 'template/create template must be a string',
      value: op('template/create', { template: 1 }),
      fails: { field: 'template', rule: 'json_type' },
    },
    { name: 'template/create name is optional', value: op('template/create', { name: undefined }) },
    {
      name: 'template/create name must be a string',
      value: op('template/create', { name: 1 }),
      fails: { field: 'name', rule: 'json_type' },
    },
    { name: 'template/delete needs neither id nor template', value: { type: 'template/delete' } },
    {
      name: 'template/delete template must be a string',
      value: { type: 'template/delete', template: 5 },
      fails: { field: 'template', rule: 'json_type' },
    },
    { name: 'template/list takes type only', value: { type: 'template/list' } },
    { name: 'balance takes type only', value: { type: 'balance' } },
    { name: 'sender takes type only', value: { type: 'sender' } },
    { name: 'voice invents no required field', value: { type: 'voice' } },
    {
      name: 'voice passes its undisclosed fields through',
      value: { type: 'voice', id: 1, phone: 79001234567, voice_message: 'hi', anything: [1, 2] },
    },
    { name: 'viber+sms invents no required field', value: { type: 'viber+sms', viber_type: 99 } },
    {
      name: 'template/viber/create invents no field',
      value: { type: 'template/viber/create', template: { any: 'shape' } },
    },
    {
      name: 'template/viber/delete invents no field',
      value: { type: 'template/viber/delete', id: 3 },
    },
    {
      name: 'template/viber/delete still checks id as a number',
      value: { type: 'template/viber/delete', id: 'x' },
      fails: { field: 'id', rule: 'json_type' },
    },
  ],
  validateOperation,
);

runTable(
  'validateEnvelopeShape',
  [
    { name: 'auth and one operation pass', value: { auth: 'key', data: [{ type: 'balance' }] } },
    { name: 'items are not validated here', value: { auth: 'key', data: [1, 'x'] } },
    { name: 'extra properties pass', value: { auth: 'key', data: [{}], trace: 'x' } },
    {
      name: 'an array is not an envelope',
      value: [],
      fails: { field: '', rule: 'not_object', message: 'envelope must be a JSON object' },
    },
    {
      name: 'auth is required',
      value: { data: [{}] },
      fails: { field: 'auth', rule: 'required', message: 'auth: is required' },
    },
    {
      name: 'auth must be a string',
      value: { auth: 1, data: [{}] },
      fails: { field: 'auth', rule: 'json_type' },
    },
    {
      name: 'data is required',
      value: { auth: 'key' },
      fails: { field: 'data', rule: 'required' },
    },
    {
      name: 'data must be an array',
      value: { auth: 'key', data: {} },
      fails: { field: 'data', rule: 'json_type' },
    },
    {
      name: 'data has at least 1 item',
      value: { auth: 'key', data: [] },
      fails: { field: 'data', rule: 'min_items', message: 'data: must have at least 1 item' },
    },
  ],
  validateEnvelopeShape,
);

const reply = {
  datetime: '2024-05-01T10:00:00+03:00',
  message: 'Yes',
  media: { url: 'https://cdn.example.com/r.jpg', filename: 'r.jpg', filesize: 2048 },
};
const fullCallback = {
  success: true,
  id: '1007',
  msg_id: 'g-1',
  type: 'viber',
  status: 'REPLIED',
  updated: '2024-05-01T10:00:00Z',
  reply: '1',
  duration: 12,
  request_id: 'req-1',
  replies: [reply, { datetime: '2024-05-01T10:01:00.123+0300' }],
};

runTable(
  'validateStatusCallback',
  [
    { name: 'success alone passes', value: { success: false } },
    { name: 'every documented field passes', value: fullCallback },
    {
      name: 'a REJECTED callback with an error passes',
      value: { success: false, status: 'REJECTED', error: 'queue refused', request_id: 'r' },
    },
    { name: 'unknown fields pass', value: { success: true, extra: { a: 1 } } },
    {
      name: 'type is not limited to the listed values',
      value: { success: true, type: 'telegram' },
    },
    {
      name: 'a body that is not an object fails',
      value: 'ok',
      fails: { field: '', rule: 'not_object', message: 'callback must be a JSON object' },
    },
    {
      name: 'success is required',
      value: { id: '1' },
      fails: { field: 'success', rule: 'required' },
    },
    {
      name: 'success must be a boolean',
      value: { success: 'true' },
      fails: { field: 'success', rule: 'json_type', message: 'success: must be a boolean' },
    },
    {
      name: 'id must be a string',
      value: { success: true, id: 1007 },
      fails: { field: 'id', rule: 'json_type' },
    },
    {
      name: 'msg_id must be a string',
      value: { success: true, msg_id: 5 },
      fails: { field: 'msg_id', rule: 'json_type' },
    },
    {
      name: 'type must be a string',
      value: { success: true, type: 1 },
      fails: { field: 'type', rule: 'json_type' },
    },
    {
      name: 'status must be a string',
      value: { success: true, status: null },
      fails: { field: 'status', rule: 'json_type' },
    },
    {
      name: 'error must be a string',
      value: { success: false, error: {} },
      fails: { field: 'error', rule: 'json_type' },
    },
    {
      name: 'updated must be a date-time',
      value: { success: true, updated: 'yesterday' },
      fails: {
        field: 'updated',
        rule: 'date_time',
        message: 'updated: must be an ISO 8601 date-time with UTC offset',
      },
    },
    {
      name: 'updated needs an offset',
      value: { success: true, updated: '2024-05-01T10:00:00' },
      fails: { field: 'updated', rule: 'date_time' },
    },
    {
      name: 'reply must be a string',
      value: { success: true, reply: 1 },
      fails: { field: 'reply', rule: 'json_type' },
    },
    {
      name: 'duration must be a number',
      value: { success: true, duration: '12' },
      fails: { field: 'duration', rule: 'json_type' },
    },
    {
      name: 'request_id must be a string',
      value: { success: true, request_id: 1 },
      fails: { field: 'request_id', rule: 'json_type' },
    },
    {
      name: 'replies must be an array',
      value: { success: true, replies: reply },
      fails: { field: 'replies', rule: 'json_type' },
    },
    {
      name: 'a reply must be an object',
      value: { success: true, replies: ['Yes'] },
      fails: { field: 'replies.0', rule: 'not_object' },
    },
    {
      name: 'a reply without message passes',
      value: { success: true, replies: [{ datetime: reply.datetime }] },
    },
    {
      name: 'a reply datetime needs an offset',
      value: { success: true, replies: [{ datetime: '2024-05-01 10:00' }] },
      fails: { field: 'replies.0.datetime', rule: 'date_time' },
    },
    {
      name: 'a reply message must be a string',
      value: { success: true, replies: [{ message: 1 }] },
      fails: { field: 'replies.0.message', rule: 'json_type' },
    },
    {
      name: 'reply media must be an object',
      value: { success: true, replies: [{ media: 'x' }] },
      fails: { field: 'replies.0.media', rule: 'not_object' },
    },
    {
      name: 'reply media url must be a URI',
      value: { success: true, replies: [reply, { media: { url: 'not a uri' } }] },
      fails: {
        field: 'replies.1.media.url',
        rule: 'url',
        message: 'replies.1.media.url: must be an absolute URI',
      },
    },
    {
      name: 'reply media filename must be a string',
      value: { success: true, replies: [{ media: { filename: 1 } }] },
      fails: { field: 'replies.0.media.filename', rule: 'json_type' },
    },
    {
      name: 'reply media filesize must be a number',
      value: { success: true, replies: [{ media: { filesize: '2048' } }] },
      fails: { field: 'replies.0.media.filesize', rule: 'json_type' },
    },
  ],
  validateStatusCallback,
);

describe('validateOperation speed', () => {
  test('validates 30,000 operations of every type within a second', () => {
    const values = operationTypes.map(
      (type) => JSON.parse(JSON.stringify(validOperations[type])) as unknown,
    );
    const started = performance.now();
    let passed = 0;
    for (let round = 0; round < 1500; round++) {
      for (const value of values) if (validateOperation(value).ok) passed++;
    }
    const elapsedMs = performance.now() - started;
    assert.equal(passed, 1500 * values.length);
    // 30,000 operations; measured at a few milliseconds, so the bound only catches a
    // regression by orders of magnitude, not machine noise.
    assert.ok(elapsedMs < 1000, `took ${elapsedMs.toFixed(1)} ms`);
  });
});

describe('failure paths in bracket form', () => {
  test('array positions become [n], object fields stay dotted', () => {
    assert.equal(bracketPath('viber_carousel.0.image'), 'viber_carousel[0].image');
    assert.equal(bracketPath('replies.12.media.url'), 'replies[12].media.url');
    assert.equal(bracketPath('pipeline.1'), 'pipeline[1]');
    assert.equal(bracketPath('sms.signature'), 'sms.signature');
    assert.equal(bracketPath(''), '');
  });

  test('a failure carries both forms', () => {
    const result = validateOperation(op('pipeline', { pipeline: ['sms', 'email'] }));
    assert.equal(result.ok, false);
    if (result.ok) return;
    assert.deepEqual([result.field, result.path], ['pipeline.1', 'pipeline[1]']);
  });
});
