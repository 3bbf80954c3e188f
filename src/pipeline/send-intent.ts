/**
 * The durable record that a partition's commands are about to be sent, so that nothing
 * is sent twice across a handover (README, Guarantees 2).
 *
 * Before the commands of a fetched batch go to the gateway, ferry commits the
 * group offset of that partition *unchanged* (the batch's first offset) with this
 * intent as the offset's metadata, through the partition's transactional producer.
 * When the results commit, the offset moves past the batch and the metadata is
 * cleared in the same transaction. So the group coordinator (a compacted Kafka
 * topic keyed by group, topic and partition) always says which range of a
 * partition may have reached the gateway without a committed result.
 */
import { messageOperationTypes, type OperationType } from '../contract/index.ts';

export interface SendIntent {
  /** Last offset of the range being sent; the range starts at the committed offset. */
  readonly untilOffset: string;
  /** When the intent was written, ms since the epoch (the writer's clock: for logs only). */
  readonly atMs: number;
  /**
   * The process that wrote it (a random id per start). A replica that reads back an
   * intent of its own knows which of those sends it still has in flight; any other
   * writer's sends are waited out on the reader's own clock.
   */
  readonly by?: string;
}

const PREFIX = 'ferry-intent:v1:';

/** The later of two offsets (decimal strings); `b` may be absent. */
export function maxOffset(a: string, b: string | undefined): string {
  return b !== undefined && BigInt(b) > BigInt(a) ? b : a;
}

export function encodeSendIntent(intent: SendIntent): string {
  return `${PREFIX}${JSON.stringify(intent)}`;
}

/** The intent stored with a committed offset, or undefined when there is none or it is not ferry's. */
export function decodeSendIntent(metadata: string | null | undefined): SendIntent | undefined {
  if (!metadata?.startsWith(PREFIX)) return undefined;
  try {
    const value = JSON.parse(metadata.slice(PREFIX.length)) as Partial<SendIntent>;
    if (typeof value.untilOffset !== 'string' || !/^\d+$/.test(value.untilOffset)) return undefined;
    if (typeof value.atMs !== 'number' || !Number.isFinite(value.atMs)) return undefined;
    const intent = { untilOffset: value.untilOffset, atMs: value.atMs };
    return typeof value.by === 'string' ? { ...intent, by: value.by } : intent;
  } catch {
    return undefined;
  }
}

/**
 * Operations that put something in front of a person, which the gateway's `status`
 * operation can find by the client's `id` (spec: status). Only these are reconciled
 * before a resend; lookups and template calls are sent again as they are.
 */
export const reconcilableTypes: ReadonlySet<OperationType> = messageOperationTypes;

/** Whether a command can be looked up with `status` before it is sent again: a send with a numeric id. */
export function isReconcilable(type: OperationType, id: unknown): boolean {
  return reconcilableTypes.has(type) && typeof id === 'number' && Number.isFinite(id);
}

/** The offset `count` records past `offset`. */
export function ahead(offset: string, count: number): string {
  return (BigInt(offset) + BigInt(count)).toString();
}

/**
 * Records past a batch that the send intent written with it covers in advance, so that
 * the next batches need no intent transaction of their own. Fetched batches vary in size
 * under load, so one batch's length ahead left every second batch uncovered; the price of
 * a longer reach is paid only after a failover, when the next owner looks those offsets
 * up in a few large envelopes instead of sending them straight away.
 */
const INTENT_REACH_MIN = 256;

export function intentReach(batchLength: number): number {
  return Math.max(2 * batchLength, INTENT_REACH_MIN);
}
