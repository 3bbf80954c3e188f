/**
 * `ferryctl dlq list` and `ferryctl dlq replay`: dead letters through the admin API,
 * with the same filters for both, a dry run, and a selection by position.
 */
import { type MessageShape, toJson } from '@bufbuild/protobuf';
import { timestampDate, timestampFromMs } from '@bufbuild/protobuf/wkt';
import {
  type AdminService,
  type DeadLetter,
  ListDeadLettersResponseSchema,
  ReplayDeadLettersResponseSchema,
} from '../admin/gen/ferry/admin/v1/admin_pb.ts';
import type { ClientOf } from '../admin/grpc-client.ts';
import { type CliIo, type Flags, numberFlag, timeFlag, UsageError } from './ferryctl-flags.ts';

/** `--offsets 0:12,1:40`: partition:offset pairs. */
function positionsFlag(value: string | undefined): { partition: number; offset: bigint }[] {
  if (value === undefined) return [];
  return value.split(',').map((pair) => {
    const match = /^\s*(\d+):(\d+)\s*$/.exec(pair);
    if (!match?.[1] || !match[2]) {
      throw new UsageError(`--offsets takes partition:offset pairs (0:12,1:40), got "${pair}"`);
    }
    return { partition: Number(match[1]), offset: BigInt(match[2]) };
  });
}

/** The filter flags `list` and `replay` share. */
function selection(flags: Flags) {
  const since = timeFlag(flags.since, '--since');
  const until = timeFlag(flags.until, '--until');
  return {
    ...(flags['error-contains'] === undefined ? {} : { errorContains: flags['error-contains'] }),
    ...(flags.type === undefined ? {} : { type: flags.type }),
    ...(since === undefined ? {} : { since: timestampFromMs(since) }),
    ...(until === undefined ? {} : { until: timestampFromMs(until) }),
    positions: positionsFlag(flags.offsets),
  };
}

function line(letter: DeadLetter): string {
  const position = `${letter.position?.partition ?? 0}:${letter.position?.offset ?? 0n}`;
  const time = letter.time ? timestampDate(letter.time).toISOString() : '-';
  const flags = [letter.replayed ? 'replayed' : '', letter.truncated ? 'truncated' : '']
    .filter(Boolean)
    .join(',');
  const columns = [
    position,
    time,
    letter.type || '-',
    `key=${letter.key}`,
    letter.delivery || '-',
    letter.error,
  ];
  if (flags) columns.push(`[${flags}]`);
  if (letter.value !== undefined) columns.push(letter.value);
  return columns.join('\t');
}

export async function runDeadLetters(
  client: ClientOf<typeof AdminService>,
  sub: string | undefined,
  flags: Flags,
  io: CliIo,
): Promise<void> {
  // A scan of a long dead-letter topic takes longer than one gateway call.
  const call = { timeoutMs: numberFlag(flags['timeout-ms'], '--timeout-ms', 120_000) };
  if (sub === 'list') {
    if (flags['in-doubt'] && flags['not-in-doubt']) {
      throw new UsageError('--in-doubt and --not-in-doubt exclude each other');
    }
    const inDoubt = flags['in-doubt'] ? true : flags['not-in-doubt'] ? false : undefined;
    const answer = await client.unary(
      'listDeadLetters',
      {
        ...selection(flags),
        limit: numberFlag(flags.limit, '--limit', 0),
        ...(inDoubt === undefined ? {} : { inDoubt }),
        includeValue: flags.values === true,
      },
      call,
    );
    if (flags.json) {
      io.out(JSON.stringify(toJson(ListDeadLettersResponseSchema, answer)));
      return;
    }
    for (const letter of answer.deadLetters) io.out(line(letter));
    io.out(
      `${answer.deadLetters.length} dead letters (scanned ${answer.scanned})${answer.limitReached ? '; limit reached, more may remain' : ''}`,
    );
    return;
  }
  if (sub === 'replay') {
    const answer = await client.unary(
      'replayDeadLetters',
      {
        ...selection(flags),
        limit: numberFlag(flags.limit, '--limit', 0),
        includeInDoubt: flags['include-in-doubt'] === true,
        dryRun: flags['dry-run'] === true,
      },
      call,
    );
    if (flags.json) {
      io.out(JSON.stringify(toJson(ReplayDeadLettersResponseSchema, answer)));
      return;
    }
    io.out(replaySummary(answer, flags['dry-run'] === true));
    return;
  }
  throw new UsageError('dlq needs list or replay');
}

function replaySummary(
  answer: MessageShape<typeof ReplayDeadLettersResponseSchema>,
  dryRun: boolean,
): string {
  const counts = `scanned ${answer.scanned}, skipped ${answer.skipped}, already replayed ${answer.alreadyReplayed}`;
  const more = answer.limitReached ? '; limit reached, more may remain' : '';
  if (!dryRun) return `replayed ${answer.replayed} (${counts})${more}`;
  return [
    `dry run: would replay ${answer.wouldReplay.length} (${counts})${more}; nothing was sent`,
    ...answer.wouldReplay.map((letter) => line(letter)),
  ].join('\n');
}
