/**
 * The command spans of one fetched batch (tracing on only): started when its commands
 * are read, ended when their results are committed, or, when the batch ends without a
 * commit and is read again, ended as re-read (the next read starts new ones, in the same
 * trace when the record carries a `traceparent`).
 */
import { boundedTypeLabel } from '../observability/metrics.ts';
import type { CommandSpan, Tracer } from '../observability/tracing.ts';
import type { Command, ValidCommand } from './command.ts';
import type { Result } from './result.ts';
import type { LookupTarget } from './send-outcome.ts';

/** W3C Trace Context headers of a command record. */
const TRACEPARENT_HEADER = 'traceparent';
const TRACESTATE_HEADER = 'tracestate';

export class BatchTrace {
  readonly #tracer: Tracer;
  /** When the batch was fetched: the spans start there, so they cover the wait for the partition's turn. */
  readonly #fetchedMs: number;
  #spans: CommandSpan[] = [];
  #commands: readonly Command[] = [];

  constructor(tracer: Tracer, fetchedMs: number = Date.now()) {
    this.#tracer = tracer;
    this.#fetchedMs = fetchedMs;
  }

  /** Starts one span per command, in their order. */
  begin(commands: readonly Command[]): void {
    this.#commands = commands;
    this.#spans = commands.map((command) => {
      const { record } = command;
      return this.#tracer.command({
        type: boundedTypeLabel(command.type),
        transport: command.transport,
        topic: record.topic,
        partition: record.partition,
        offset: record.offset,
        traceparent: record.headers[TRACEPARENT_HEADER],
        tracestate: record.headers[TRACESTATE_HEADER],
        startMs: this.#fetchedMs,
      });
    });
  }

  /** The span of the command at `index` of the batch. */
  span(index: number): CommandSpan | undefined {
    return this.#spans[index];
  }

  /** Lookup targets of these commands (of this batch) that carry their spans. */
  lookupTargets(commands: readonly ValidCommand[]): LookupTarget[] {
    const spans = new Map<Command, CommandSpan>();
    this.#commands.forEach((command, index) => {
      const span = this.#spans[index];
      if (span) spans.set(command, span);
    });
    return commands.map((command) => ({
      id: command.id,
      type: command.type,
      span: spans.get(command),
    }));
  }

  /** The results (in the commands' order) were committed. */
  committed(results: readonly Result[]): void {
    this.#spans.forEach((span, index) => {
      const result = results[index];
      if (!result) return;
      span.committed({
        stage: result.stage,
        success: result.success,
        attempts: result.attempts,
        reconciled: result.reconciled,
        delivery: result.delivery,
      });
    });
  }

  /** Ends whatever did not commit as re-read. Spans already ended are left alone. */
  close(): void {
    for (const span of this.#spans) span.reread();
  }
}
