/**
 * The gateway's data shapes (spec: Resources and their fields). Operation interfaces live
 * beside their rule tables in operations.ts, the callback beside its table in
 * status-callback.ts; both are re-exported here so callers have one place to import from.
 */
import type { Reply } from './status-callback.ts';

export type {
  BalanceOperation,
  CallOtpOperation,
  HlrOperation,
  Operation,
  OperationCommon,
  OperationExtras,
  OperationOf,
  PipelineOperation,
  PipelineRcs,
  PipelineSms,
  PipelineTelegram,
  PipelineViber,
  PipelineVoice,
  PipelineWhatsapp,
  RcsOperation,
  RcsSmsOperation,
  RcsViberSmsOperation,
  SenderOperation,
  SmsOperation,
  StatusOperation,
  TelegramOperation,
  TemplateCreateOperation,
  TemplateDeleteOperation,
  TemplateListOperation,
  TemplateViberCreateOperation,
  TemplateViberDeleteOperation,
  TemplateViberListOperation,
  ViberCarouselItem,
  ViberOperation,
  ViberSmsOperation,
  VoiceOperation,
} from './operations.ts';
export type { Reply, ReplyMedia, StatusCallback } from './status-callback.ts';

/** The request body of both endpoints (spec: Request envelope). */
export interface RequestEnvelope {
  /** The account's API key (spec: Authentication rule 1). Secret: never log it. */
  auth: string;
  /** At least 1 operation object. */
  data: unknown[];
}

/**
 * The sync endpoint's answer (spec: Response envelope). `success` is a boolean on the wire
 * (some tables of the spec call it an integer).
 */
export interface ResponseEnvelope {
  success: boolean;
  /** Present when the envelope was rejected, e.g. `Access denied`. */
  error?: string;
  /** One item per operation sent, same order; absent when rejected. */
  data?: ResponseItem[];
}

/** The result of one operation (spec: Response item). */
export interface ResponseItem {
  success: boolean;
  /** Present when this operation failed, e.g. `Error in Alpha-name`. */
  error?: string;
  /** Operation payload; its shape depends on the operation (a failed send holds only `id`). */
  data?: unknown;
}

/** Item `data` of a successful send on the sync endpoint (spec: Send result payload). */
export interface SendResult {
  /** The client's own message identifier. */
  id: string | number;
  /** Identifier assigned by the gateway. */
  msg_id: string | number;
  /** Number of message parts billed. */
  parts: number;
  /** Inner field whose meaning is not shown. */
  data?: number;
}

/**
 * The async endpoint's answer as it is on the wire (spec: Async response). Named `...Body`
 * because `AsyncResponse` (response.ts) is the decoded result of `readAsyncResponse`.
 */
export interface AsyncResponseBody {
  success: boolean;
  /** Identifier of the queued request; repeated in the callback. */
  request_id?: string;
  /** Present when the request was rejected (e.g. `Access denied`). */
  error?: string;
}

/** Item `data` of `status` (spec: Message status record). */
export interface MessageStatusRecord {
  id: string | number;
  msg_id: string | number;
  /** Channel of the message, e.g. `viber`. */
  type: string;
  /** e.g. `DELIVERED`, `READ`, `REPLIED` (spec: States and transitions). */
  status: string;
  /** ISO 8601 date-time with UTC offset. */
  updated: string;
  /** Present for Viber 2 Way messages that received replies. */
  replies?: Reply[];
}

/** Item `data` of `balance` (spec: Balance record). */
export interface BalanceRecord {
  /** Current balance, decimal. */
  amount: number;
  /** Currency code of the account. */
  currency: string;
}

/** One element of the item `data` array of `sender` (spec: Sender record). */
export interface SenderRecord {
  /** Sender name (alpha-name). */
  name: string;
  /** Verification status text. */
  status: string;
}

/** Country of an HLR network (spec: HLR result). */
export interface HlrCountry {
  name: string;
  prefix: number;
}

/** A network in an HLR result (spec: HLR result, `network.origin` / `network.ported`). */
export interface HlrNetwork {
  name: string;
  prefix: number;
  country: HlrCountry;
}

/** Item `data` of `hlr` (spec: HLR result). */
export interface HlrResult {
  /** The number checked. */
  phone: number;
  /** Lookup status, e.g. `DELIVERED`. */
  status: string;
  /** Subscriber identity. */
  imsi: number;
  /** Country and network code. */
  mccmnc: number;
  ported: boolean;
  network: {
    origin: HlrNetwork;
    ported: HlrNetwork;
  };
}
