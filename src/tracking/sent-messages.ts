/**
 * Which results of a batch are messages to track until their final status: sends (and
 * `call/otp`) the gateway accepted, with the `msg_id` (sync) or `request_id` (async) it
 * gave, or found at the gateway by a lookup. Duplicates are not: their first is tracked.
 */
import { messageOperationTypes, type OperationType } from '../contract/operation-types.ts';
import type { Command } from '../pipeline/command.ts';
import type { Result } from '../pipeline/result.ts';
import { isReconcilable } from '../pipeline/send-intent.ts';
import { idText, matchKey, type SentMessage } from './tracking-records.ts';

export function sentMessagesOf(
  commands: readonly Command[],
  results: readonly (Result | undefined)[],
): SentMessage[] {
  const out: SentMessage[] = [];
  commands.forEach((command, index) => {
    const result = results[index];
    if (command.kind !== 'valid' || !result?.success || result.code === 'duplicate') return;
    if (result.truncated) return;
    const type = command.type as OperationType;
    if (!messageOperationTypes.has(type)) return;
    const ids = {
      id: idText(command.id),
      msgId: idText(result.msg_id),
      requestId: idText(result.request_id),
    };
    if (ids.msgId === undefined && ids.requestId === undefined) return;
    const key = matchKey(ids);
    if (key === undefined) return;
    const { record } = command;
    out.push({
      ...ids,
      key,
      type,
      sentAt: result.completed_at,
      command: { topic: record.topic, partition: record.partition, offset: record.offset },
      lookup: isReconcilable(type, command.id),
    });
  });
  return out;
}
