/**
 * Copies written long after their first: once a chaos run has drained, the earliest
 * commands that ended in a message at the gateway are written again with kcat, minutes
 * after the kafkajs producer wrote them and after every kill, broker restart and
 * rebalance of the run. With duplicate suppression each copy must be answered
 * `duplicate` with its first's msg_id, and the gateway must not see the id again.
 */
import { readTopic } from './chaos-kafka.ts';
import type { PlannedRecord } from './command-mix.ts';
import { kcatProduce } from './kcat-producer.ts';
import { recordValue } from './verify-run.ts';

export interface LateCopies {
  /** The keys written again. */
  readonly keys: readonly string[];
  /** From the first of them being written by the run's producer to the copies. */
  readonly secondsAfterFirst: number;
}

/**
 * Picks up to `count` of `candidates` (in the order they were written) whose one result
 * so far is a success with a msg_id, and writes each once more through kcat.
 * Candidates must be keyed JSON commands without headers (kcat writes a line each).
 */
export async function writeLateCopies(options: {
  readonly brokers: string;
  readonly commandsTopic: string;
  readonly resultsTopic: string;
  readonly candidates: readonly PlannedRecord[];
  readonly count: number;
  readonly firstWrittenAt: number;
}): Promise<LateCopies> {
  const wanted = new Set(options.candidates.map((c) => c.key));
  const results = await readTopic(
    options.brokers,
    options.resultsTopic,
    (read) => new Set(read.filter((r) => wanted.has(r.key)).map((r) => r.key)).size >= wanted.size,
    { timeoutMs: 30_000, settleMs: 1_000 },
  );
  const resultsOf = new Map<string, Record<string, unknown>[]>();
  for (const record of results) {
    if (!wanted.has(record.key)) continue;
    const list = resultsOf.get(record.key) ?? [];
    list.push(recordValue(record));
    resultsOf.set(record.key, list);
  }
  const picked = options.candidates
    .filter((c) => {
      const list = resultsOf.get(c.key);
      return list?.length === 1 && list[0]?.success === true && typeof list[0]?.msg_id === 'string';
    })
    .slice(0, options.count);
  if (picked.length > 0) await kcatProduce(options.brokers, options.commandsTopic, 'lz4', picked);
  return {
    keys: picked.map((c) => c.key),
    secondsAfterFirst: Math.round((Date.now() - options.firstWrittenAt) / 1000),
  };
}
