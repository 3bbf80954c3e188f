import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { groupMessagesLinearly, kafkajsGrouping } from '../../src/kafka/kafkajs-grouping.ts';

const root = fileURLToPath(new URL('../..', import.meta.url));

interface Message {
  readonly key: string;
  readonly partition: number;
}

function input(messages: readonly Message[], partitions = 6) {
  return {
    topic: 'results',
    partitionMetadata: Array.from({ length: partitions }, (_, partitionId) => ({ partitionId })),
    messages,
    partitioner: ({ message }: { message: Message }) => message.partition,
  };
}

/**
 * Array iterator steps taken while `run` runs. Replacing the iterator's `next` turns off
 * V8's fast path for spreading arrays, so every element a spread copies is counted.
 */
function iteratorSteps(run: () => void): number {
  const prototype = Object.getPrototypeOf([][Symbol.iterator]()) as { next: () => unknown };
  const next = prototype.next;
  let steps = 0;
  prototype.next = function counted(this: unknown) {
    steps += 1;
    return next.call(this);
  };
  try {
    run();
  } finally {
    prototype.next = next;
  }
  return steps;
}

test('kafkajs copies a partition’s list for every message; the replacement does not', () => {
  const n = 2_000;
  const messages = Array.from({ length: n }, (_, i) => ({ key: `k${i}`, partition: 3 }));
  const kafkajsSteps = iteratorSteps(() => kafkajsGrouping(input(messages)));
  const linearSteps = iteratorSteps(() => groupMessagesLinearly(input(messages)));
  // kafkajs: 1 + 2 + … + n elements copied, about n²/2.
  assert.ok(kafkajsSteps >= (n * n) / 2, `kafkajs took ${kafkajsSteps} steps for ${n} messages`);
  assert.ok(linearSteps <= n + 1, `the replacement took ${linearSteps} steps for ${n} messages`);
});

test('the replacement groups exactly as kafkajs does', () => {
  const messages = Array.from({ length: 500 }, (_, i) => ({
    key: `k${i}`,
    partition: (i * 7) % 5,
  }));
  const expected = kafkajsGrouping(input(messages));
  const grouped = groupMessagesLinearly(input(messages));
  assert.deepEqual(grouped, expected);
  assert.deepEqual(Object.keys(grouped), Object.keys(expected), 'partitions in the same order');
  assert.deepEqual(groupMessagesLinearly(input(messages, 0)), kafkajsGrouping(input(messages, 0)));
  assert.deepEqual(groupMessagesLinearly(input([])), kafkajsGrouping(input([])));
});

/** `groupingReplaced()` in a process of its own that imports `first` before anything else. */
async function replacedAfterImporting(first: string): Promise<string> {
  const script = [
    `await import(${JSON.stringify(first)});`,
    "const { groupingReplaced } = await import('./src/kafka/kafkajs-grouping.ts');",
    'process.stdout.write(String(groupingReplaced()));',
  ].join('\n');
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--input-type=module', '-e', script],
    { cwd: root },
  );
  return stdout;
}

test('kafkajs’s producers use the replacement once the daemon’s modules are loaded', async () => {
  // What counts is the order in which the daemon loads its modules.
  assert.equal(await replacedAfterImporting('./src/daemon.ts'), 'true');
});

test('loaded after kafkajs, the replacement says it is not in use', async () => {
  assert.equal(await replacedAfterImporting('kafkajs'), 'false');
});
