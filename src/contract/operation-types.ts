/**
 * The values of an operation object's `type` (spec: Endpoints, "Operation types") and the
 * groups of them that other parts of ferry branch on.
 */

/** Every operation type the gateway accepts, in the spec's order (spec: Endpoints). */
export const operationTypes = [
  'balance',
  'call/otp',
  'hlr',
  'pipeline',
  'rcs',
  'rcs+sms',
  'rcs+viber+sms',
  'sender',
  'sms',
  'status',
  'telegram',
  'template/create',
  'template/delete',
  'template/list',
  'template/viber/create',
  'template/viber/delete',
  'template/viber/list',
  'viber',
  'viber+sms',
  'voice',
] as const;

export type OperationType = (typeof operationTypes)[number];

const operationTypeSet: ReadonlySet<string> = new Set(operationTypes);

/** True when `value` is one of the 20 operation types (exact, case-sensitive match). */
export function isOperationType(value: unknown): value is OperationType {
  return typeof value === 'string' && operationTypeSet.has(value);
}

/**
 * Operation types that accept `hook` and send a status callback (spec: Events), minus
 * `pipeline`, whose `hook` the gateway does not store: its status goes to the account's
 * notification address instead (spec: pipeline rule 2).
 */
export const hookOperationTypes: ReadonlySet<OperationType> = new Set<OperationType>([
  'sms',
  'viber',
  'rcs',
  'rcs+sms',
  'rcs+viber+sms',
  'telegram',
]);

/**
 * Operation types that send a message and whose sync item `data` is a send result
 * (`id`, `msg_id`, `parts`; spec: "Send result payload", Endpoints "send items carry id,
 * msg_id, parts").
 *
 * Included although their request fields are undisclosed: `voice` (a voice message) and
 * `viber+sms` (Viber with resend by SMS) are message sends by the spec's own description.
 * `pipeline` sends a message over the channels it names.
 *
 * Excluded: `call/otp`. It places a call, but the spec says it returns "the one-time code
 * and the fee" under field names that are not shown (spec: Voice OTP result), so its payload
 * is kept opaque rather than read as a send result.
 */
export const sendOperationTypes: ReadonlySet<OperationType> = new Set<OperationType>([
  'sms',
  'viber',
  'viber+sms',
  'rcs',
  'rcs+sms',
  'rcs+viber+sms',
  'telegram',
  'voice',
  'pipeline',
]);

/**
 * Operation types that reach a person: the sends and `call/otp` (a call carrying a code).
 * These are the ones a deadline default applies to, and whose delivery matters twice.
 */
export const messageOperationTypes: ReadonlySet<OperationType> = new Set<OperationType>([
  ...sendOperationTypes,
  'call/otp',
]);

/**
 * Operation types whose answer `data.id` is the identifier the gateway gave to what it
 * created, not the command's `id` echoed back: a template created with `"id": 7` comes
 * back as template `"1"` (spec: template/create names its identifier as the gateway's).
 * Their answer is matched to the operation by position alone, as every item is.
 */
export const gatewayAssignedIdTypes: ReadonlySet<OperationType> = new Set<OperationType>([
  'template/create',
  'template/viber/create',
]);

/**
 * The `id` an operation's answer item must carry, for `readSyncResponse`: the command's own
 * `id`, or undefined (nothing to compare) when the gateway answers with an id of its own.
 */
export function answerIdOf(type: unknown, id: unknown): unknown {
  return gatewayAssignedIdTypes.has(type as OperationType) ? undefined : id;
}

/** The two endpoints (spec: Endpoints): sync `/api/json.php`, async `/v1/json`. */
export type Transport = 'sync' | 'async';

/** The `type` value that is not an operation type: it fails with `Invalid message type` (spec: Endpoints). */
export const WHATSAPP_TYPE = 'whatsapp';

/** `viber_type` values of `rcs+viber+sms` (spec: rcs+viber+sms). Not stated for the `viber` operation. */
export const viberTypes = ['carousel', 'image', 'text', 'text+image+link', 'text+link'] as const;
export type ViberType = (typeof viberTypes)[number];

/** Values allowed in a `pipeline` operation's `pipeline` array (spec: pipeline). */
export const pipelineChannels = ['voice', 'telegram', 'viber', 'rcs', 'sms', 'whatsapp'] as const;
export type PipelineChannel = (typeof pipelineChannels)[number];

/** Values of `voice.gender` in a `pipeline` operation (spec: pipeline). */
export const voiceGenders = ['male', 'female'] as const;
export type VoiceGender = (typeof voiceGenders)[number];

/** Callback `type` values listed by the spec (spec: Events). Informative: not enforced, see validate.ts. */
export const callbackChannelTypes = ['sms', 'viber', 'voice', 'rcs'] as const;
