/**
 * The rules every simulated run must keep, checked on what it left behind: each command
 * record has exactly one committed result; no id was carried out by the gateway more
 * often than it was written; no success is claimed for a send the gateway never got;
 * no valid command is refused (else the gateway carried nothing out and the checks of
 * sends held by default); and, once faults stopped, every partition was committed to its end.
 */
import type { VisibleRecord } from './sim-broker.ts';

export interface OracleInput {
  /** The key and id of every command record written, in write order (a copy repeats both). */
  readonly commands: readonly { key: string; id: number; valid: boolean }[];
  readonly visible: readonly VisibleRecord[];
  readonly resultsTopic: string;
  /** Sends the gateway carried out, per id (as a string). */
  readonly sendsById: Readonly<Record<string, number>>;
  /** Partitions whose group offset did not reach their end, with both. */
  readonly unfinished: readonly string[];
  /** Duplicate suppression was on: an id is carried out once whatever its copies. */
  readonly dedupe?: boolean;
  /** Final status tracking was on: its final events are here. */
  readonly finalTopic?: string;
}

/** What a committed result says about a message sent: its key, when it was one. */
function sentMessageKey(record: VisibleRecord, resultsTopic: string): string | undefined {
  if (record.topic !== resultsTopic || record.key === null) return undefined;
  const result = JSON.parse(record.value ?? 'null') as Record<string, unknown> | null;
  if (result?.success !== true || result.code === 'duplicate') return undefined;
  return result.msg_id === undefined ? undefined : String(result.id);
}

/** The final events, by command id. */
function finalsById(visible: readonly VisibleRecord[], finalTopic: string) {
  const finals = new Map<string, Record<string, unknown>[]>();
  for (const record of visible) {
    if (record.topic !== finalTopic || record.key === null) continue;
    const event = JSON.parse(record.value ?? 'null') as Record<string, unknown>;
    finals.set(record.key, [...(finals.get(record.key) ?? []), event]);
  }
  return finals;
}

/** Ids of messages sent (a committed success) that have no final event yet. */
export function missingFinals(
  visible: readonly VisibleRecord[],
  resultsTopic = 'results',
  finalTopic = 'final-status',
): string[] {
  const finals = finalsById(visible, finalTopic);
  const missing = new Set<string>();
  for (const record of visible) {
    const id = sentMessageKey(record, resultsTopic);
    if (id !== undefined && !finals.has(id)) missing.add(id);
  }
  return [...missing];
}

/**
 * Final status rules: every message sent has a final event; no id has more final events
 * than messages sent with it (with dedupe, one); none for an id never sent; none given up
 * (the gateway always knows a final status here).
 */
function checkFinals(input: OracleInput, finalTopic: string): string[] {
  const violations: string[] = [];
  const finals = finalsById(input.visible, finalTopic);
  const sentResults = new Map<string, number>();
  for (const record of input.visible) {
    const id = sentMessageKey(record, input.resultsTopic);
    if (id !== undefined) sentResults.set(id, (sentResults.get(id) ?? 0) + 1);
  }
  for (const [id, results] of sentResults) {
    const events = finals.get(id) ?? [];
    // Without dedupe a copy is a command of its own: one the gateway already had is
    // answered from the lookup (reconciled) and gets a final event of its own, one per
    // result. With dedupe, copies are duplicates and the id has one message.
    const allowed = input.dedupe ? 1 : results;
    if (events.length === 0) violations.push(`id ${id}: sent, but no final status event`);
    else if (events.length > Math.max(1, allowed)) {
      violations.push(`id ${id}: ${events.length} final status events for ${allowed} message(s)`);
    }
    for (const event of events) {
      if (event.source === 'give_up') violations.push(`id ${id}: final status given up`);
    }
  }
  for (const id of finals.keys()) {
    if (!sentResults.has(id)) violations.push(`id ${id}: a final status event, but never sent`);
  }
  return violations;
}

export function checkRun(input: OracleInput): string[] {
  const violations: string[] = [];
  const results = new Map<string, Record<string, unknown>[]>();
  for (const record of input.visible) {
    if (record.topic !== input.resultsTopic || record.key === null) continue;
    const list = results.get(record.key) ?? [];
    list.push(JSON.parse(record.value ?? 'null') as Record<string, unknown>);
    results.set(record.key, list);
  }
  const written = new Map<string, { id: number; valid: boolean; copies: number }>();
  for (const { key, id, valid } of input.commands) {
    const seen = written.get(key);
    written.set(key, { id, valid, copies: (seen?.copies ?? 0) + 1 });
  }
  for (const [key, { id, valid, copies }] of written) {
    const got = results.get(key) ?? [];
    if (got.length !== copies) {
      violations.push(`command ${key}: ${got.length} results for ${copies} record(s)`);
    }
    const sends = input.sendsById[String(id)] ?? 0;
    // With duplicate suppression an id goes out once whatever its copies; without it, a
    // copy is a command of its own.
    const allowed = input.dedupe ? 1 : copies;
    if (sends > allowed) violations.push(`command ${key}: id ${id} carried out ${sends} times`);
    if (!valid && sends > 0) violations.push(`command ${key}: invalid, yet sent`);
    for (const result of got) {
      const duplicate = result.code === 'duplicate';
      if (duplicate && !input.dedupe) violations.push(`command ${key}: duplicate with dedupe off`);
      // The simulator writes only commands the gateway accepts: a refusal (or a valid one
      // failing validation) means the run tested nothing, or ferry misread its command.
      if (valid && !duplicate && result.success === false && result.stage !== 'transport') {
        violations.push(`command ${key}: valid, yet ${result.stage} refused it: ${result.error}`);
      }
      const first = result.duplicate_of as { success?: unknown } | undefined;
      const claimsSend = result.success === true || (duplicate && first?.success === true);
      if (claimsSend && sends === 0) {
        violations.push(`command ${key}: success without a send the gateway carried out`);
      }
    }
  }
  for (const key of results.keys()) {
    if (!written.has(key)) violations.push(`a result for ${key}, which no command had`);
  }
  for (const partition of input.unfinished) violations.push(`partition not finished: ${partition}`);
  if (input.finalTopic !== undefined) violations.push(...checkFinals(input, input.finalTopic));
  return violations;
}
