/**
 * The checks of a chaos run, on what was read back from Kafka and what the emulator
 * accepted: one committed result per record, no send accepted twice for an id, no
 * success claimed for a send the gateway never got, a dead letter for each
 * unreadable record, ferry never exiting on its own outside a broker outage, and, with
 * final status tracking, one final status event per message sent.
 *
 * "Per record" means per record the commands topic holds, not per planned one: the
 * run's own producer (kafkajs, idempotent) has written a record twice after a leader
 * was killed, and ferry must then answer, and may send, each copy. A copy is counted and
 * reported; a planned record the topic lacks makes the run invalid (a violation).
 */
import { messageOperationTypes, type OperationType } from '../../src/contract/operation-types.ts';
import { isReconcilable } from '../../src/pipeline/send-intent.ts';
import type { ReadBack } from './chaos-kafka.ts';
import type { PlannedRecord } from './command-mix.ts';
import type { UnexpectedExit } from './ferry-replicas.ts';

export interface VerifyInput {
  readonly plan: readonly PlannedRecord[];
  /** The keys of the records in the commands topic at the end, as read back. */
  readonly commandKeys: readonly string[];
  readonly results: readonly ReadBack[];
  readonly deadLetters: readonly ReadBack[];
  readonly sendsById: Readonly<Record<string, number>>;
  readonly emulatorFaults: Readonly<Record<string, number>>;
  readonly emulatorRequests: number;
  /** From the last fault to a drained lag; undefined when it never drained. */
  readonly drainMs: number | undefined;
  /** From the last command produced to a drained lag. */
  readonly drainMsAfterLastRecord: number | undefined;
  readonly unexpectedExits: readonly UnexpectedExit[];
  readonly brokerDownWindows: readonly { fromMs: number; toMs: number }[];
  readonly replicaStarts: number;
  readonly faults: readonly string[];
  readonly seed: number;
  readonly oversize?: { bytes: number; accepted: boolean; error?: string };
  /**
   * ferry ran with duplicate suppression (FERRY_DEDUPE, on by default): a record written
   * twice reaches the gateway once, its copy answered `duplicate`. Off: each copy is a
   * command of its own.
   */
  readonly dedupe?: boolean;
  /**
   * The final status topic as read back when ferry ran with FERRY_STATUS_TRACKING
   * (undefined: tracking was off, nothing is checked).
   */
  readonly finalStatuses?: readonly ReadBack[];
  /** From a drained lag to the last message's final status event; undefined when not all came. */
  readonly finalStatusWaitMs?: number;
  /** Commands written again long after their first (late-copies.ts); checked with dedupe on. */
  readonly lateCopies?: { readonly keys: readonly string[]; readonly secondsAfterFirst: number };
}

/** Final status figures of a run with tracking. */
export interface FinalStatusFigures {
  /** Messages the results say were sent (a send or call/otp with a msg_id or request_id, not a duplicate). */
  messagesSent: number;
  /** Of those, without a numeric id: ferry cannot look them up, so without callbacks they wait for the give-up bound (48 h); 0 or 1 event. */
  sentWithoutLookup: number;
  events: number;
  bySource: Record<string, number>;
  missing: number;
  moreThanOne: number;
  forMessagesNeverSent: number;
  givenUp: number;
  waitMsAfterDrain: number | null;
}

/** The printed figures of a run. */
export interface ChaosFigures {
  seed: number;
  commandsProduced: number;
  badInputRecords: number;
  recordsInCommandsTopic: number;
  /** Planned records the commands topic holds more than once (the run's producer wrote them twice). */
  commandsWrittenTwice: number;
  resultsCommitted: number;
  resultDuplicates: number;
  resultsMissing: number;
  resultsUnexpected: number;
  reconcilableSendIds: number;
  gatewaySendsForThoseIds: number;
  idsSentMoreThanOnce: number;
  successWithoutGatewaySend: number;
  validationFailuresSent: number;
  deadLetters: number;
  deadLettersExpected: number;
  reconciled: number;
  transportFailures: number;
  validationFailures: number;
  upstreamFailures: number;
  emulatorRequests: number;
  emulatorFaults: Record<string, number>;
  replicaStarts: number;
  unexpectedExits: number;
  faults: readonly string[];
  drainMsAfterLastFault: number | null;
  drainMsAfterLastRecord: number | null;
  oversize: string;
  /** null: the run had final status tracking off. */
  finalStatuses: FinalStatusFigures | null;
  /** Copies written after the drain, minutes after their firsts: how many were answered `duplicate`. */
  lateCopies: {
    written: number;
    secondsAfterFirst: number;
    answeredDuplicate: number | null;
  } | null;
}

/** A replica exiting on its own this long after the broker came back still counts as caused by the outage. */
const OUTAGE_MARGIN_MS = 60_000;

/** A record's value as a JSON object ({} when it is none, `unparsable` when it is not JSON). */
export function recordValue(record: ReadBack): Record<string, unknown> {
  try {
    const value: unknown = JSON.parse(record.value?.toString('utf8') ?? 'null');
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {};
  } catch {
    return { unparsable: true };
  }
}

/** An id as ferry's tracking writes it (src/tracking/tracking-records.ts idText). */
function idText(value: unknown): string | undefined {
  if (typeof value === 'string' && value !== '') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/**
 * What ties a message to its final status event (a result and an event name both): the
 * command's id with the gateway's async `request_id` (one per envelope, so the id too),
 * else with its `msg_id` (one per message).
 */
export function finalStatusMessageKey(
  value: Readonly<Record<string, unknown>>,
): string | undefined {
  const gatewayId = idText(value.request_id) ?? idText(value.msg_id);
  return gatewayId === undefined ? undefined : `${idText(value.id) ?? ''} ${gatewayId}`;
}

/** A message ferry says it sent, which final status tracking must finalize. */
export interface SentMessage {
  readonly messageKey: string;
  /** The command's id as its final event is keyed, for the report. */
  readonly id: string;
  /** A numeric id: ferry looks the message up FERRY_STATUS_POLL_AFTER_MS after the send. */
  readonly lookedUp: boolean;
}

/**
 * The messages the results say were sent, as ferry tracks them
 * (src/tracking/sent-messages.ts): a successful send or call/otp with a msg_id or
 * request_id, neither a `duplicate` (its first is the message) nor cut to the record limit.
 */
export function messagesSent(results: readonly ReadBack[]): SentMessage[] {
  const sent: SentMessage[] = [];
  for (const record of results) {
    const result = recordValue(record);
    const type = result.type as OperationType;
    if (result.success !== true || result.code === 'duplicate' || result.truncated === true)
      continue;
    if (!messageOperationTypes.has(type)) continue;
    const messageKey = finalStatusMessageKey(result);
    if (messageKey === undefined) continue;
    sent.push({
      messageKey,
      id: idText(result.id) ?? messageKey,
      lookedUp: isReconcilable(type, result.id),
    });
  }
  return sent;
}

/**
 * README guarantee 6 without callbacks: every message sent that ferry can look up has
 * exactly one final status event, none is given up, and no event names a message that
 * was never sent successfully (so, with dedupe, no id has two). With dedupe off, ids
 * reused share one tracking record: only the latest copy's message must have its event.
 */
function checkFinalStatuses(
  input: VerifyInput,
  finals: readonly ReadBack[],
  violations: string[],
): FinalStatusFigures {
  const sent = messagesSent(input.results);
  const events = new Map<string, Record<string, unknown>[]>();
  const bySource: Record<string, number> = {};
  const neverSent: string[] = [];
  const givenUp: string[] = [];
  const sentKeys = new Set(sent.map((m) => m.messageKey));
  for (const record of finals) {
    const event = recordValue(record);
    const source = String(event.source);
    bySource[source] = (bySource[source] ?? 0) + 1;
    if (source === 'give_up') givenUp.push(record.key);
    const messageKey = finalStatusMessageKey(event);
    if (messageKey === undefined || !sentKeys.has(messageKey)) {
      neverSent.push(record.key);
      continue;
    }
    events.set(messageKey, [...(events.get(messageKey) ?? []), event]);
  }
  const latestOfId = new Map(sent.map((m) => [m.id, m.messageKey]));
  // Without dedupe, a copy found at the gateway by a lookup is a message of its own with its
  // first's msg_id and an event of its own; with dedupe, one event per message at most.
  const copies = new Map<string, number>();
  if (input.dedupe === false)
    for (const m of sent) copies.set(m.messageKey, (copies.get(m.messageKey) ?? 0) + 1);
  const missing: string[] = [];
  const moreThanOne: string[] = [];
  for (const message of sent) {
    const count = events.get(message.messageKey)?.length ?? 0;
    if (count > (copies.get(message.messageKey) ?? 1)) moreThanOne.push(`${message.id}×${count}`);
    const required =
      message.lookedUp &&
      (input.dedupe !== false || latestOfId.get(message.id) === message.messageKey);
    if (required && count === 0) missing.push(message.id);
  }
  if (missing.length > 0)
    violations.push(
      `${missing.length} messages sent have no final status event: ${sample(missing)}`,
    );
  if (moreThanOne.length > 0)
    violations.push(
      `${moreThanOne.length} messages sent have more than one final status event: ${sample(moreThanOne)}`,
    );
  if (neverSent.length > 0)
    violations.push(
      `${neverSent.length} final status events for messages never sent successfully: ${sample(neverSent)}`,
    );
  if (givenUp.length > 0)
    violations.push(`${givenUp.length} final status events given up: ${sample(givenUp)}`);
  return {
    messagesSent: sent.length,
    sentWithoutLookup: sent.filter((m) => !m.lookedUp).length,
    events: finals.length,
    bySource,
    missing: missing.length,
    moreThanOne: moreThanOne.length,
    forMessagesNeverSent: neverSent.length,
    givenUp: givenUp.length,
    waitMsAfterDrain: input.finalStatusWaitMs ?? null,
  };
}

export function verifyRun(input: VerifyInput): { figures: ChaosFigures; violations: string[] } {
  const violations: string[] = [];
  const planned = new Map(input.plan.map((r) => [r.key, r]));
  const copies = new Map<string, number>();
  for (const key of input.commandKeys) copies.set(key, (copies.get(key) ?? 0) + 1);
  const copiesOf = (key: string) => copies.get(key) ?? 0;
  const resultsByKey = new Map<string, Record<string, unknown>[]>();
  for (const record of input.results) {
    const value = recordValue(record);
    const list = resultsByKey.get(record.key) ?? [];
    list.push(value);
    resultsByKey.set(record.key, list);
  }
  const duplicated = [...resultsByKey]
    .filter(([key, list]) => list.length > Math.max(1, copiesOf(key)))
    .map(([key]) => key);
  // A key in the topic twice needs a result per copy.
  const missing = [...planned.keys()].filter(
    (key) => (resultsByKey.get(key)?.length ?? 0) < Math.max(1, copiesOf(key)),
  );
  const unexpected = [...resultsByKey.keys()].filter((key) => !planned.has(key));
  if (duplicated.length > 0)
    violations.push(
      `${duplicated.length} commands have more than one result: ${sample(duplicated)}`,
    );
  if (missing.length > 0)
    violations.push(`${missing.length} commands have no result: ${sample(missing)}`);
  if (unexpected.length > 0)
    violations.push(`${unexpected.length} results for keys never produced: ${sample(unexpected)}`);
  const lost = [...planned.keys()].filter((key) => copiesOf(key) === 0);
  if (lost.length > 0) {
    violations.push(
      `the commands topic lacks ${lost.length} planned records (the run's producer lost them): ${sample(lost)}`,
    );
  }
  const writtenTwice = [...planned.keys()].filter((key) => copiesOf(key) > 1);

  // Ids planned once only: an id two fuzz records share (e.g. 0) says nothing about ferry.
  const idUses = new Map<string, number>();
  for (const record of input.plan) {
    if (record.reconcilableId !== undefined)
      idUses.set(record.reconcilableId, (idUses.get(record.reconcilableId) ?? 0) + 1);
  }
  let gatewaySends = 0;
  const sentTwice: string[] = [];
  const claimedNotSent: string[] = [];
  const invalidSent: string[] = [];
  let checkedIds = 0;
  for (const record of input.plan) {
    const id = record.reconcilableId;
    if (id === undefined || idUses.get(id) !== 1) continue;
    checkedIds += 1;
    const sends = input.sendsById[id] ?? 0;
    gatewaySends += sends;
    // With duplicate suppression a copy is answered, not sent; without it each copy of
    // a record written twice is a command of its own.
    const allowed = input.dedupe === false ? Math.max(1, copiesOf(record.key)) : 1;
    if (sends > allowed) sentTwice.push(`${id}×${sends}`);
    const result = resultsByKey.get(record.key)?.[0];
    // A result that says the gateway took the message, for a message the gateway never accepted, is a lost command.
    if (result?.success === true && sends === 0) claimedNotSent.push(id);
    // A command refused by the contract must never reach the gateway (a copy answered
    // `duplicate` is at stage validation too, and its first was sent).
    const refused = resultsByKey
      .get(record.key)
      ?.some((r) => r.stage === 'validation' && r.code !== 'duplicate');
    if (refused && sends > 0) invalidSent.push(id);
  }
  if (sentTwice.length > 0)
    violations.push(
      `${sentTwice.length} ids reached the gateway more than once: ${sample(sentTwice)}`,
    );
  if (invalidSent.length > 0)
    violations.push(
      `${invalidSent.length} commands refused by the contract reached the gateway: ${sample(invalidSent)}`,
    );
  if (claimedNotSent.length > 0)
    violations.push(
      `${claimedNotSent.length} successful results for sends the gateway never accepted: ${sample(claimedNotSent)}`,
    );

  const all = [...resultsByKey.values()].map((list) => list[0] as Record<string, unknown>);
  const count = (predicate: (r: Record<string, unknown>) => boolean) =>
    all.filter(predicate).length;
  // Per result, not per key: each copy of a record written twice has its own dead letter.
  const transportFailures = [...resultsByKey.values()]
    .flat()
    .filter((r) => r.stage === 'transport').length;
  let expectedDeadLetters = transportFailures;
  for (const record of input.plan) {
    if (record.expectDeadLetter) expectedDeadLetters += Math.max(1, copiesOf(record.key));
  }
  const deadLetterKeys = new Map<string, number>();
  for (const record of input.deadLetters)
    deadLetterKeys.set(record.key, (deadLetterKeys.get(record.key) ?? 0) + 1);
  const unreadableWithout = input.plan.filter(
    (r) => r.expectDeadLetter && deadLetterKeys.get(r.key) !== Math.max(1, copiesOf(r.key)),
  );
  if (unreadableWithout.length > 0) {
    violations.push(
      `${unreadableWithout.length} unreadable records without exactly one dead letter per copy: ${sample(unreadableWithout.map((r) => `${r.key} (${r.label})`))}`,
    );
  }
  if (input.deadLetters.length !== expectedDeadLetters) {
    violations.push(`${input.deadLetters.length} dead letters, ${expectedDeadLetters} expected`);
  }
  // Contract failures and gateway refusals are results, not faults; they are checked per record below.
  for (const record of input.plan) {
    const result = resultsByKey.get(record.key)?.[0];
    if (!result) continue;
    if (record.expectDeadLetter && result.stage !== 'validation') {
      violations.push(
        `unreadable record ${record.key} (${record.label}) ended at stage ${String(result.stage)}`,
      );
    }
  }
  if (input.drainMs === undefined) violations.push('the consumer lag never drained');

  const outageExits = input.unexpectedExits.filter((exit) =>
    input.brokerDownWindows.some(
      (w) => exit.atMs >= w.fromMs && exit.atMs <= w.toMs + OUTAGE_MARGIN_MS,
    ),
  );
  const otherExits = input.unexpectedExits.filter((exit) => !outageExits.includes(exit));
  if (otherExits.length > 0) {
    violations.push(
      `ferry exited on its own away from a broker outage: ${otherExits.map((e) => `${e.replica} code ${e.code}`).join(', ')}`,
    );
  }
  if (input.oversize?.accepted) {
    violations.push(
      `a ${input.oversize.bytes}-byte record was accepted by the broker; the suite assumes the 1 MB default`,
    );
  }

  const finalStatuses = input.finalStatuses
    ? checkFinalStatuses(input, input.finalStatuses, violations)
    : null;
  const reconcilableIdOf = new Map(input.plan.map((r) => [r.key, r.reconcilableId]));
  const late =
    input.lateCopies && input.dedupe !== false
      ? checkLateCopies(input.lateCopies.keys, resultsByKey, input.sendsById, (key) =>
          reconcilableIdOf.get(key),
        )
      : undefined;
  if (late) violations.push(...late.violations);

  const figures: ChaosFigures = {
    seed: input.seed,
    commandsProduced: input.plan.filter((r) => !r.key.startsWith('fuzz-')).length,
    badInputRecords: input.plan.filter((r) => r.key.startsWith('fuzz-')).length,
    recordsInCommandsTopic: input.commandKeys.length,
    commandsWrittenTwice: writtenTwice.length,
    resultsCommitted: input.results.length,
    resultDuplicates: duplicated.length,
    resultsMissing: missing.length,
    resultsUnexpected: unexpected.length,
    reconcilableSendIds: checkedIds,
    gatewaySendsForThoseIds: gatewaySends,
    idsSentMoreThanOnce: sentTwice.length,
    successWithoutGatewaySend: claimedNotSent.length,
    validationFailuresSent: invalidSent.length,
    deadLetters: input.deadLetters.length,
    deadLettersExpected: expectedDeadLetters,
    reconciled: count((r) => r.reconciled === true),
    transportFailures,
    validationFailures: count((r) => r.stage === 'validation'),
    upstreamFailures: count((r) => r.stage === 'upstream' && r.success === false),
    emulatorRequests: input.emulatorRequests,
    emulatorFaults: { ...input.emulatorFaults },
    replicaStarts: input.replicaStarts,
    unexpectedExits: input.unexpectedExits.length,
    faults: input.faults,
    drainMsAfterLastFault: input.drainMs ?? null,
    drainMsAfterLastRecord: input.drainMsAfterLastRecord ?? null,
    oversize: input.oversize
      ? `${input.oversize.bytes} bytes: ${input.oversize.accepted ? 'accepted' : `refused by the producer/broker (${input.oversize.error ?? ''})`}`
      : 'not tried',
    finalStatuses,
    lateCopies: input.lateCopies
      ? {
          written: input.lateCopies.keys.length,
          secondsAfterFirst: input.lateCopies.secondsAfterFirst,
          answeredDuplicate: late?.answeredDuplicate ?? null,
        }
      : null,
  };
  return { figures, violations };
}

function sample(items: readonly string[], size = 10): string {
  return items.length <= size ? items.join(', ') : `${items.slice(0, size).join(', ')}, …`;
}

/** What the results say of the late copies; `violations` is empty when every copy held. */
export function checkLateCopies(
  keys: readonly string[],
  resultsByKey: ReadonlyMap<string, readonly Record<string, unknown>[]>,
  sendsById: Readonly<Record<string, number>>,
  idOf: (key: string) => string | undefined,
): { answeredDuplicate: number; violations: string[] } {
  const wrong: string[] = [];
  let answeredDuplicate = 0;
  for (const key of keys) {
    const list = resultsByKey.get(key) ?? [];
    const firsts = list.filter((r) => r.code !== 'duplicate');
    const copies = list.filter((r) => r.code === 'duplicate');
    const first = firsts[0];
    const id = idOf(key);
    const sameOutcome = copies.every(
      (c) =>
        c.msg_id === first?.msg_id &&
        (c.duplicate_of as { success?: unknown } | undefined)?.success === first?.success,
    );
    if (firsts.length === 1 && copies.length >= 1 && sameOutcome) answeredDuplicate += 1;
    else wrong.push(`${key} (${firsts.length} sent, ${copies.length} duplicate)`);
    if (id !== undefined && (sendsById[id] ?? 0) > 1) wrong.push(`${key}: id ${id} sent again`);
  }
  const violations =
    wrong.length > 0
      ? [
          `${wrong.length} late copies not answered duplicate with their first's outcome: ${wrong.slice(0, 10).join(', ')}`,
        ]
      : [];
  return { answeredDuplicate, violations };
}
