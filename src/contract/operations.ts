/**
 * Every operation type: its interface and, right beside it, its rule table (spec: Endpoints,
 * one section per type). Each table is checked against its interface at compile time with
 * `defineSpec<XOperation>()` (see field-rules.ts); `operationSpecs` at the bottom must
 * hold one entry per operation type, so a type without a table does not compile.
 *
 * Every interface allows unknown extra properties (`[extra: string]: unknown`): the contract
 * permits them and ferry passes them through untouched (spec: Operation object (common)).
 * Where the spec says a field's requiredness or values are "not shown", the field is optional
 * and only its stated JSON type is checked.
 */
import {
  boolean,
  digits,
  type FieldRules,
  type KnownKeys,
  number,
  object,
  objectArray,
  oneOf,
  opaqueObject,
  optional,
  phone,
  required,
  secondsRange,
  string,
  uniqueOneOf,
  url,
} from './field-rules.ts';
import {
  RCS_LIFETIME_MIN_S,
  SMS_LIFETIME_MAX_S,
  SMS_LIFETIME_MIN_S,
  TELEGRAM_LIFETIME_MIN_S,
  TELEGRAM_OTP_MAX_DIGITS,
  TELEGRAM_OTP_MIN_DIGITS,
} from './limits.ts';
import {
  type OperationType,
  type PipelineChannel,
  pipelineChannels,
  type ViberType,
  type VoiceGender,
  viberTypes,
  voiceGenders,
} from './operation-types.ts';

/** The rule table of one operation type plus its cross-field requirements. */
export interface OperationSpec<T extends { type: string }> {
  /** Rules per field; `type` itself is matched by the dispatcher, not by the table. */
  readonly fields: FieldRules<T, 'type'>;
  /**
   * Fields that become required when `field` has a given value (spec: rcs+viber+sms,
   * "Fields required by viber_type").
   */
  readonly requiredByValue?: {
    readonly field: KnownKeys<T>;
    readonly requires: Readonly<Record<string, readonly KnownKeys<T>[]>>;
  };
  /**
   * Object fields that become required when the string array `field` names them
   * (spec: pipeline, "the objects of the named channels").
   */
  readonly requiredWhenNamed?: {
    readonly field: KnownKeys<T>;
    readonly names: readonly KnownKeys<T>[];
  };
}

/**
 * Checks a spec against interface `T` at compile time: every declared field has a rule that
 * fits it (`OperationSpec<T>`), and the table has no rule for a field `T` does not declare
 * (tables are built with spreads, which `satisfies` alone does not check for extra keys).
 * Curried so that `T` is given and the table's literal type is inferred.
 */
export function defineSpec<T extends { type: string }>() {
  return <const S extends OperationSpec<T>>(spec: S & NoUndeclaredFields<S, T>): S => spec;
}
type NoUndeclaredFields<S extends { readonly fields: object }, T> = {
  readonly fields: { readonly [K in Exclude<keyof S['fields'], KnownKeys<T>>]: never };
};

/** Unknown extra properties are permitted on every operation object (spec: Operation object). */
export interface OperationExtras {
  [extra: string]: unknown;
}

/**
 * The common fields (spec: Operation object (common)). They are optional here; each type
 * makes required what its section requires. When present they are checked on every type.
 */
export interface OperationCommon extends OperationExtras {
  /** The client's message identifier (`<client_message_id>`). */
  id?: number;
  /** Recipient number: international format, digits only, no `+`. */
  phone?: number;
  /** Absolute http(s) URL that receives the delivery-status callback (spec: Events). */
  hook?: string;
}

const common = {
  id: optional(number),
  phone: optional(phone),
  hook: optional(url),
} as const;

// ---------------------------------------------------------------------------------------
// Account queries: balance, sender (spec: "Request: `type` only").

export interface BalanceOperation extends OperationCommon {
  type: 'balance';
}
const balanceSpec = defineSpec<BalanceOperation>()({ fields: common });

export interface SenderOperation extends OperationCommon {
  type: 'sender';
}
const senderSpec = defineSpec<SenderOperation>()({ fields: common });

// ---------------------------------------------------------------------------------------
// hlr, status, call/otp (spec: "Request fields, all required").

export interface HlrOperation extends OperationCommon {
  type: 'hlr';
  id: number;
  phone: number;
}
const hlrSpec = defineSpec<HlrOperation>()({
  fields: { ...common, id: required(number), phone: required(phone) },
});

export interface StatusOperation extends OperationCommon {
  type: 'status';
  /** The client's identifier of the message whose status is asked. */
  id: number;
}
const statusSpec = defineSpec<StatusOperation>()({
  fields: { ...common, id: required(number) },
});

export interface CallOtpOperation extends OperationCommon {
  type: 'call/otp';
  id: number;
  phone: number;
}
const callOtpSpec = defineSpec<CallOtpOperation>()({
  fields: { ...common, id: required(number), phone: required(phone) },
});

// ---------------------------------------------------------------------------------------
// sms (spec: sms).

export interface SmsOperation extends OperationCommon {
  type: 'sms';
  id: number;
  phone: number;
  /** Message text. */
  sms_message: string;
  /** Sender name (alpha-name); an unknown one fails the item with `Error in Alpha-name`. */
  sms_signature: string;
  /** Shortened and tracked links, available according to the tariff. */
  short_link?: boolean;
  /** Seconds, 3600 to 259200, default 172800 (spec: Limits). */
  sms_lifetime?: number;
  /** Unsubscribe link, available according to the tariff. */
  unsubscribe_link?: boolean;
}
const smsSpec = defineSpec<SmsOperation>()({
  fields: {
    ...common,
    id: required(number),
    phone: required(phone),
    sms_message: required(string),
    sms_signature: required(string),
    short_link: optional(boolean),
    sms_lifetime: optional(secondsRange(SMS_LIFETIME_MIN_S, SMS_LIFETIME_MAX_S)),
    unsubscribe_link: optional(boolean),
  },
});

// ---------------------------------------------------------------------------------------
// telegram (spec: telegram; one-time passwords only).

export interface TelegramOperation extends OperationCommon {
  type: 'telegram';
  id: number;
  phone: number;
  /** The password: 4 to 8 digits (spec: telegram, Limits). */
  message: string;
  /** Seconds, at least 60, default 172800 (spec: Limits). */
  telegram_lifetime?: number;
}
const telegramSpec = defineSpec<TelegramOperation>()({
  fields: {
    ...common,
    id: required(number),
    phone: required(phone),
    message: required(digits(TELEGRAM_OTP_MIN_DIGITS, TELEGRAM_OTP_MAX_DIGITS)),
    telegram_lifetime: optional(secondsRange(TELEGRAM_LIFETIME_MIN_S)),
  },
});

// ---------------------------------------------------------------------------------------
// rcs, rcs+sms, rcs+viber+sms (spec: rcs, rcs+sms, rcs+viber+sms).

interface RcsFields extends OperationCommon {
  id: number;
  phone: number;
  rcs_message: string;
  rcs_signature: string;
  /** Absolute http(s) URL of the image. */
  rcs_image: string;
  /** Button caption. */
  rcs_button: string;
  /** Absolute http(s) URL opened by the button. */
  rcs_link: string;
  /** Seconds, at least 60, default 172800 (spec: Limits). */
  rcs_lifetime?: number;
  short_link?: boolean;
}
const rcsFields = {
  ...common,
  id: required(number),
  phone: required(phone),
  rcs_message: required(string),
  rcs_signature: required(string),
  rcs_image: required(url),
  rcs_button: required(string),
  rcs_link: required(url),
  rcs_lifetime: optional(secondsRange(RCS_LIFETIME_MIN_S)),
  short_link: optional(boolean),
} as const;

export interface RcsOperation extends RcsFields {
  type: 'rcs';
}
const rcsSpec = defineSpec<RcsOperation>()({ fields: rcsFields });

interface RcsSmsFields extends RcsFields {
  /** Text of the SMS sent if RCS delivery fails. */
  sms_message: string;
  sms_signature: string;
}
export interface RcsSmsOperation extends RcsSmsFields {
  type: 'rcs+sms';
}
const rcsSmsFields = {
  ...rcsFields,
  sms_message: required(string),
  sms_signature: required(string),
} as const;
const rcsSmsSpec = defineSpec<RcsSmsOperation>()({ fields: rcsSmsFields });

/** One card of a Viber carousel (spec: viber). Requiredness of its fields: not shown. */
export interface ViberCarouselItem extends OperationExtras {
  caption?: string;
  /** Absolute http(s) URL of the card image. */
  image?: string;
  /** Typed only as a string by the spec (unlike `image`), so not checked as a URL. */
  url?: string;
  button?: string;
}
const viberCarouselItemFields = {
  caption: optional(string),
  image: optional(url),
  url: optional(string),
  button: optional(string),
} as const satisfies FieldRules<ViberCarouselItem>;

export interface RcsViberSmsOperation extends RcsSmsFields {
  type: 'rcs+viber+sms';
  viber_type: ViberType;
  viber_signature: string;
  /** Required when `viber_type` is carousel, text, text+image+link or text+link. */
  viber_message?: string;
  /** Absolute http(s) URL; required when `viber_type` is image or text+image+link. */
  viber_image?: string;
  /** Absolute http(s) URL; required when `viber_type` is text+image+link or text+link. */
  viber_link?: string;
  /** Button caption; required when `viber_type` is text+image+link or text+link. */
  viber_button?: string;
  /** Required when `viber_type` is carousel. */
  viber_carousel?: ViberCarouselItem[];
}
const rcsViberSmsSpec = defineSpec<RcsViberSmsOperation>()({
  fields: {
    ...rcsSmsFields,
    viber_type: required(oneOf(viberTypes)),
    viber_signature: required(string),
    viber_message: optional(string),
    viber_image: optional(url),
    viber_link: optional(url),
    viber_button: optional(string),
    viber_carousel: optional(objectArray<ViberCarouselItem>(viberCarouselItemFields)),
  },
  requiredByValue: {
    field: 'viber_type',
    requires: {
      carousel: ['viber_carousel', 'viber_message'],
      image: ['viber_image'],
      text: ['viber_message'],
      'text+image+link': ['viber_button', 'viber_image', 'viber_link', 'viber_message'],
      'text+link': ['viber_button', 'viber_link', 'viber_message'],
    } satisfies Record<ViberType, readonly KnownKeys<RcsViberSmsOperation>[]>,
  },
});

// ---------------------------------------------------------------------------------------
// viber (spec: viber). Which fields are required and the allowed `viber_type` values are
// not shown, so every field is optional and only its JSON type (and URL form) is checked.

export interface ViberOperation extends OperationCommon {
  type: 'viber';
  viber_type?: string;
  viber_signature?: string;
  viber_message?: string;
  viber_carousel?: ViberCarouselItem[];
  /** Seconds; bounds and default not shown (spec: Limits). */
  viber_lifetime?: number;
  short_link?: boolean;
}
const viberSpec = defineSpec<ViberOperation>()({
  fields: {
    ...common,
    viber_type: optional(string),
    viber_signature: optional(string),
    viber_message: optional(string),
    viber_carousel: optional(objectArray<ViberCarouselItem>(viberCarouselItemFields)),
    viber_lifetime: optional(number),
    short_link: optional(boolean),
  },
});

// ---------------------------------------------------------------------------------------
// pipeline (spec: pipeline, multi-channel).

/** `sms` stage of a pipeline: both fields required within it. */
export interface PipelineSms extends OperationExtras {
  message: string;
  signature: string;
}
/**
 * `telegram` stage of a pipeline: `message` required. The 4-to-8-digit rule is NOT applied
 * here: the pipeline table states only "`message` string (required)", and the Limits line
 * "`telegram` `message`: 4 to 8 digits" names the `telegram` operation's field (as the
 * lifetime rows name operation fields). Pipeline rule 1 says what Telegram is for, not a form.
 */
export interface PipelineTelegram extends OperationExtras {
  message: string;
}
/** `viber` stage of a pipeline: all three required within it; `type` values not shown. */
export interface PipelineViber extends OperationExtras {
  message: string;
  signature: string;
  type: string;
}
/** `voice` stage of a pipeline: all required within it. */
export interface PipelineVoice extends OperationExtras {
  gender: VoiceGender;
  language: string;
  /** Language model name. */
  name: string;
}
/**
 * `whatsapp` stage of a pipeline. Both fields are "required by the contract but not
 * validated": a request missing them is accepted and charged (spec: pipeline rule 5). So
 * only "is an object" is checked.
 */
export interface PipelineWhatsapp extends OperationExtras {
  /** One-time password text. */
  message?: string;
  /** Registered sender name. */
  signature?: string;
}
/** `rcs` stage of a pipeline: "carries signature and message"; types and requiredness not shown. */
export interface PipelineRcs extends OperationExtras {
  signature?: unknown;
  message?: unknown;
}

/**
 * A multi-channel request: the channels in `pipeline` are tried in order.
 *
 * `id` is optional here (a number when present). Spec pipeline rule 4: the requiredness of
 * `id` is inconsistent between the multi-channel and the WhatsApp OTP variants, so the
 * validator takes the permissive side and invents no requirement; code that needs an id
 * (reconciliation by `status`) must ask for it itself. Tests rely only on "a numeric id
 * passes, a non-numeric one fails".
 *
 * A channel object is required when `pipeline` names it (except `rcs`, whose requiredness is
 * not shown), and checked whenever present. The spec's looser sentence "the contract lists
 * ... sms, telegram, viber, voice, whatsapp ... as required" is read as: the objects of
 * the named channels. `pipeline` must name at least one channel: the spec states no
 * minimum, but a multi-channel request over no channel can deliver nothing, and passing it
 * would only cost an upstream round trip for a certain failure. `hook` is accepted but not
 * stored by the gateway (rules 2, 3).
 */
export interface PipelineOperation extends OperationCommon {
  type: 'pipeline';
  phone: number;
  /** Channel order; values from the allowed set, none repeated. */
  pipeline: PipelineChannel[];
  sms?: PipelineSms;
  telegram?: PipelineTelegram;
  viber?: PipelineViber;
  voice?: PipelineVoice;
  whatsapp?: PipelineWhatsapp;
  rcs?: PipelineRcs;
}
const pipelineSpec = defineSpec<PipelineOperation>()({
  fields: {
    ...common,
    phone: required(phone),
    pipeline: required(uniqueOneOf(pipelineChannels, 1)),
    sms: optional(object<PipelineSms>({ message: required(string), signature: required(string) })),
    telegram: optional(object<PipelineTelegram>({ message: required(string) })),
    viber: optional(
      object<PipelineViber>({
        message: required(string),
        signature: required(string),
        type: required(string),
      }),
    ),
    voice: optional(
      object<PipelineVoice>({
        gender: required(oneOf(voiceGenders)),
        language: required(string),
        name: required(string),
      }),
    ),
    whatsapp: optional(opaqueObject),
    rcs: optional(opaqueObject),
  },
  requiredWhenNamed: {
    field: 'pipeline',
    names: ['sms', 'telegram', 'viber', 'voice', 'whatsapp'],
  },
});

// ---------------------------------------------------------------------------------------
// SMS templates (spec: template/create, template/delete, template/list).

export interface TemplateCreateOperation extends OperationCommon {
  type: 'template/create';
  /** Template text. */
  template: string;
  name?: string;
}
const templateCreateSpec = defineSpec<TemplateCreateOperation>()({
  fields: { ...common, template: required(string), name: optional(string) },
});

/** Deletes templates matching `id` and/or the exact `template` text. */
export interface TemplateDeleteOperation extends OperationExtras {
  type: 'template/delete';
  /** For this type `id` is a string: the template identifier (spec: Operation object). */
  id?: string;
  /** Exact template text. */
  template?: string;
  phone?: number;
  hook?: string;
}
const templateDeleteSpec = defineSpec<TemplateDeleteOperation>()({
  fields: { ...common, id: optional(string), template: optional(string) },
});

/** Lists the SMS templates; request fields other than `type`: not shown. */
export interface TemplateListOperation extends OperationCommon {
  type: 'template/list';
}
const templateListSpec = defineSpec<TemplateListOperation>()({ fields: common });

// ---------------------------------------------------------------------------------------
// Operations with undisclosed fields (spec: "Operations with undisclosed fields"): only the
// common-field rules apply.

export interface TemplateViberCreateOperation extends OperationCommon {
  type: 'template/viber/create';
}
export interface TemplateViberDeleteOperation extends OperationCommon {
  type: 'template/viber/delete';
}
export interface TemplateViberListOperation extends OperationCommon {
  type: 'template/viber/list';
}
export interface ViberSmsOperation extends OperationCommon {
  type: 'viber+sms';
}
export interface VoiceOperation extends OperationCommon {
  type: 'voice';
}
const templateViberCreateSpec = defineSpec<TemplateViberCreateOperation>()({ fields: common });
const templateViberDeleteSpec = defineSpec<TemplateViberDeleteOperation>()({ fields: common });
const templateViberListSpec = defineSpec<TemplateViberListOperation>()({ fields: common });
const viberSmsSpec = defineSpec<ViberSmsOperation>()({ fields: common });
const voiceSpec = defineSpec<VoiceOperation>()({ fields: common });

// ---------------------------------------------------------------------------------------

/** Any operation object, discriminated by `type`. */
export type Operation =
  | BalanceOperation
  | CallOtpOperation
  | HlrOperation
  | PipelineOperation
  | RcsOperation
  | RcsSmsOperation
  | RcsViberSmsOperation
  | SenderOperation
  | SmsOperation
  | StatusOperation
  | TelegramOperation
  | TemplateCreateOperation
  | TemplateDeleteOperation
  | TemplateListOperation
  | TemplateViberCreateOperation
  | TemplateViberDeleteOperation
  | TemplateViberListOperation
  | ViberOperation
  | ViberSmsOperation
  | VoiceOperation;

/** The operation interface of one type, e.g. `OperationOf<'sms'>` is `SmsOperation`. */
export type OperationOf<K extends OperationType> = Extract<Operation, { type: K }>;

/**
 * One rule table per operation type. The mapped type makes a missing type, or a type whose
 * interface is missing from `Operation`, a compile error.
 */
export const operationSpecs: { readonly [K in OperationType]: OperationSpec<OperationOf<K>> } = {
  balance: balanceSpec,
  'call/otp': callOtpSpec,
  hlr: hlrSpec,
  pipeline: pipelineSpec,
  rcs: rcsSpec,
  'rcs+sms': rcsSmsSpec,
  'rcs+viber+sms': rcsViberSmsSpec,
  sender: senderSpec,
  sms: smsSpec,
  status: statusSpec,
  telegram: telegramSpec,
  'template/create': templateCreateSpec,
  'template/delete': templateDeleteSpec,
  'template/list': templateListSpec,
  'template/viber/create': templateViberCreateSpec,
  'template/viber/delete': templateViberDeleteSpec,
  'template/viber/list': templateViberListSpec,
  viber: viberSpec,
  'viber+sms': viberSmsSpec,
  voice: voiceSpec,
};
