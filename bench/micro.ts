/**
 * Micro-benchmarks of ferry's hot path in isolation, in operations per second:
 * reading a command (decode + parse + validate), building an envelope of 100
 * operations, reading a sync answer of 100 items, and encoding one result.
 *
 * Each benchmark runs a warm-up, then several timed rounds (process.hrtime.bigint);
 * the figure is the median round. Run alone: `node bench/micro.ts [--quick]`.
 */
import { encodeEnvelope, readSyncResponse } from '../src/contract/index.ts';
import type { InboundRecord } from '../src/kafka/kafka-client.ts';
import { readCommand, type ValidCommand } from '../src/pipeline/command.ts';
import { sendResult } from '../src/pipeline/result.ts';
import { benchCommands } from './command-mix.ts';
import { median } from './stats.ts';

export interface MicroOptions {
  /** Timed rounds per benchmark. Default 7. */
  readonly rounds?: number;
  /** Length of one round and of the warm-up, ms. Default 300. */
  readonly roundMs?: number;
}

export interface MicroResult {
  readonly name: string;
  /** Median over rounds of operations per second (one call of the function is one operation). */
  readonly opsPerSecond: number;
  /** Items handled per call (100 for the envelope and the answer), so items/s = ops/s × this. */
  readonly itemsPerOp: number;
  readonly roundsOpsPerSecond: readonly number[];
}

interface MicroCase {
  readonly name: string;
  readonly itemsPerOp: number;
  /** Runs the operation `iterations` times; returns something so the work cannot be optimised away. */
  readonly run: (iterations: number) => unknown;
}

const API_KEY = 'bench-api-key-0123456789';
const reader = { defaultTransport: 'sync' as const, transports: new Set(['sync' as const]) };

function inboundRecords(count: number): InboundRecord[] {
  return benchCommands(1, count).map((command, index) => ({
    topic: 'bench.commands',
    partition: 0,
    offset: String(index),
    key: Buffer.from(command.key),
    value: Buffer.from(command.value),
    headers: {},
    timestamp: String(Date.now()),
  }));
}

/** A sync answer for `ids` the way the gateway (emulator) writes it, every 50th item failing. */
function syncAnswer(ids: readonly number[]): string {
  const items = ids.map((id, index) =>
    index % 50 === 49
      ? { success: false, error: 'Error in Alpha-name', data: { id } }
      : {
          success: true,
          data: { id, msg_id: String(9_000_000_000 + id), parts: 1 + (id % 2), data: 1 },
        },
  );
  return JSON.stringify({ success: true, data: items });
}

function cases(): MicroCase[] {
  const records = inboundRecords(1000);
  const valid = records
    .map((record) => readCommand(record, reader))
    .filter((command): command is ValidCommand => command.kind === 'valid');
  const operations = valid.slice(0, 100).map((command) => command.json);
  const ids = valid.slice(0, 100).map((command) => Number(command.id));
  const answer = syncAnswer(ids);
  const items = readSyncResponse(answer, ids);
  const firstItem = items.kind === 'items' ? items.items[0] : undefined;
  const firstCommand = valid[0];
  if (!firstItem || !firstCommand) throw new Error('micro-benchmark fixtures are empty');
  return [
    {
      name: 'read command (decode + parse + validate)',
      itemsPerOp: 1,
      run: (iterations) => {
        let sink = 0;
        for (let i = 0; i < iterations; i++) {
          const record = records[i % records.length] as InboundRecord;
          if (readCommand(record, reader).kind === 'valid') sink += 1;
        }
        return sink;
      },
    },
    {
      name: 'encode envelope of 100 operations',
      itemsPerOp: 100,
      run: (iterations) => {
        let sink = 0;
        for (let i = 0; i < iterations; i++) sink += encodeEnvelope(API_KEY, operations).length;
        return sink;
      },
    },
    {
      name: 'read sync answer of 100 items',
      itemsPerOp: 100,
      run: (iterations) => {
        let sink = 0;
        for (let i = 0; i < iterations; i++) {
          const response = readSyncResponse(answer, ids);
          if (response.kind === 'items') sink += response.items.length;
        }
        return sink;
      },
    },
    {
      name: 'build + serialise one result',
      itemsPerOp: 1,
      run: (iterations) => {
        let sink = 0;
        const outcome = { kind: 'item' as const, item: firstItem, attempts: 1 };
        for (let i = 0; i < iterations; i++) {
          sink += JSON.stringify(sendResult(firstCommand, outcome)).length;
        }
        return sink;
      },
    },
  ];
}

let blackhole: unknown;

/** Calls `run` in growing batches until `durationMs` passed; returns operations per second. */
function timedRound(run: MicroCase['run'], durationMs: number): number {
  const budgetNs = BigInt(durationMs) * 1_000_000n;
  const start = process.hrtime.bigint();
  let iterations = 0;
  let batch = 16;
  let elapsed = 0n;
  // Bounded by time; batches double so the clock is read rarely.
  while (elapsed < budgetNs) {
    blackhole = run(batch);
    iterations += batch;
    elapsed = process.hrtime.bigint() - start;
    if (batch < 65_536) batch *= 2;
  }
  return iterations / (Number(elapsed) / 1e9);
}

/** Runs every micro-benchmark: warm-up, then `rounds` timed rounds each. */
export function runMicroBenchmarks(options: MicroOptions = {}): MicroResult[] {
  const rounds = options.rounds ?? 7;
  const roundMs = options.roundMs ?? 300;
  return cases().map((micro) => {
    timedRound(micro.run, roundMs);
    const roundsOpsPerSecond = Array.from({ length: rounds }, () => timedRound(micro.run, roundMs));
    return {
      name: micro.name,
      opsPerSecond: median(roundsOpsPerSecond),
      itemsPerOp: micro.itemsPerOp,
      roundsOpsPerSecond,
    };
  });
}

/** The table printed for the micro-benchmarks. */
export function formatMicroTable(results: readonly MicroResult[]): string {
  const lines = ['micro-benchmark                               ops/s        items/s'];
  for (const r of results) {
    lines.push(
      `${r.name.padEnd(42)} ${Math.round(r.opsPerSecond).toLocaleString('en-US').padStart(10)} ${Math.round(
        r.opsPerSecond * r.itemsPerOp,
      )
        .toLocaleString('en-US')
        .padStart(14)}`,
    );
  }
  return lines.join('\n');
}

if (import.meta.main) {
  const quick = process.argv.includes('--quick');
  const results = runMicroBenchmarks(quick ? { rounds: 3, roundMs: 150 } : {});
  process.stdout.write(`${formatMicroTable(results)}\n`);
  if (blackhole === Symbol.for('never')) process.stdout.write('\n');
}
