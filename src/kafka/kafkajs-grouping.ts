/**
 * A linear replacement for kafkajs's grouping of a send's messages by partition.
 *
 * kafkajs (2.2.4, `src/producer/groupMessagesPerPartition.js`) builds each partition's
 * list by copying it for every message (`[...current, message]`): a send of n messages
 * to one partition copies n²/2 references and leaves as many bytes of garbage behind.
 * ferry's result transactions put all of a partition's results in one partition, so a
 * backlog's transactions of 1,000–2,000 results paid milliseconds of CPU and megabytes of
 * garbage per send for grouping alone.
 *
 * kafkajs's `sendMessages.js` binds the grouping function with `require` when it is
 * loaded, so the replacement has to be in Node's module cache before kafkajs loads:
 * this module runs first through `./kafkajs.ts`, which every module of ferry imports
 * kafkajs from. Loaded later (kafkajs already loaded elsewhere), it changes nothing and
 * `groupingReplaced()` says so.
 */
import { createRequire } from 'node:module';

interface GroupingInput<M> {
  readonly topic: string;
  readonly partitionMetadata: readonly unknown[];
  readonly messages: readonly M[];
  readonly partitioner: (args: {
    topic: string;
    partitionMetadata: readonly unknown[];
    message: M;
  }) => number;
}

type Grouping = <M>(input: GroupingInput<M>) => Record<number, M[]>;

/** The same result as kafkajs's grouping (partition → its messages, in order), in one pass. */
export function groupMessagesLinearly<M>({
  topic,
  partitionMetadata,
  messages,
  partitioner,
}: GroupingInput<M>): Record<number, M[]> {
  const grouped: Record<number, M[]> = {};
  if (partitionMetadata.length === 0) return grouped;
  for (const message of messages) {
    const partition = partitioner({ topic, partitionMetadata, message });
    let list = grouped[partition];
    if (list === undefined) {
      list = [];
      grouped[partition] = list;
    }
    list.push(message);
  }
  return grouped;
}

const require = createRequire(import.meta.url);

/** Where kafkajs keeps a producer file; undefined if a kafkajs of another layout is installed. */
export function kafkajsProducerFile(path: string): string | undefined {
  try {
    return require.resolve(`kafkajs/src/producer/${path}`);
  } catch {
    return undefined;
  }
}

const groupingPath = kafkajsProducerFile('groupMessagesPerPartition.js');
const sendMessagesPath = kafkajsProducerFile('sendMessages.js');

/** kafkajs's own grouping, kept for the test that shows what it costs. */
export const kafkajsGrouping: Grouping =
  groupingPath === undefined ? groupMessagesLinearly : (require(groupingPath) as Grouping);

// Too late once sendMessages.js is loaded: it holds kafkajs's function already. A kafkajs
// laid out otherwise keeps its own grouping (slower, not wrong); the tests say so.
const loadedBefore =
  sendMessagesPath === undefined || require.cache[sendMessagesPath] !== undefined;
const cached = groupingPath === undefined ? undefined : require.cache[groupingPath];
if (!loadedBefore && cached) cached.exports = groupMessagesLinearly;

/** Whether kafkajs's producers group messages with `groupMessagesLinearly`. */
export function groupingReplaced(): boolean {
  return cached !== undefined && !loadedBefore && cached.exports === groupMessagesLinearly;
}
