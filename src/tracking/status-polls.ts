/**
 * Asking the gateway about messages whose callback is late: one `status` lookup per
 * message, many per envelope (the lane's send queue batches them), read against the
 * statuses that are not final yet.
 */
import type { LookupAnswer, LookupTarget } from '../pipeline/send-outcome.ts';
import { type FinalStatus, fromStatusRecord } from './final-status.ts';
import type { SentMessage } from './tracking-records.ts';

/** Messages asked about per partition per round at most; the rest wait for the next round. */
export const POLL_BATCH = 2_000;

export type PollAnswers =
  /** The lookups could not be made now (gate closed, gateway failing, ferry stopping). */
  | { readonly kind: 'failed'; readonly asked: number }
  | {
      readonly kind: 'answered';
      readonly finals: readonly { message: SentMessage; status: FinalStatus }[];
      /** Asked, and not final yet (or unknown to the gateway): asked again later. */
      readonly notFinal: readonly SentMessage[];
    };

export async function pollStatuses(
  messages: readonly SentMessage[],
  lookUp: (targets: readonly LookupTarget[]) => Promise<LookupAnswer[] | undefined>,
  notFinalStatuses: ReadonlySet<string>,
): Promise<PollAnswers> {
  const asked = messages.slice(0, POLL_BATCH);
  const targets: LookupTarget[] = asked.map((message) => ({
    // Only messages with a numeric client id are looked up (`lookup` in their record).
    id: Number(message.id),
    type: message.type as LookupTarget['type'],
  }));
  let answers: LookupAnswer[] | undefined;
  try {
    answers = await lookUp(targets);
  } catch {
    answers = undefined;
  }
  if (!answers) return { kind: 'failed', asked: asked.length };
  const finals: { message: SentMessage; status: FinalStatus }[] = [];
  const notFinal: SentMessage[] = [];
  asked.forEach((message, index) => {
    const answer = answers[index];
    const status =
      answer?.kind === 'sent' ? fromStatusRecord(answer.record, notFinalStatuses) : undefined;
    if (status) finals.push({ message, status });
    else notFinal.push(message);
  });
  return { kind: 'answered', finals, notFinal };
}
