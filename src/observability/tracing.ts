/**
 * OpenTelemetry tracing of commands: what ferry traces, and whether it traces at all.
 * Off unless `OTEL_TRACES_EXPORTER=otlp`: then, and only then, the SDK is imported
 * (otel-tracer.ts, by a dynamic import), so a ferry without tracing loads none of it and
 * its hot path tests one `undefined`. This module imports nothing of OpenTelemetry.
 *
 * The standard variables are read here (the SDK package ferry uses reads none of them
 * itself); the OTLP exporter reads its own (`OTEL_EXPORTER_OTLP_ENDPOINT`, `_HEADERS`,
 * `_TIMEOUT` and their `_TRACES_` forms).
 */
import type { Transport } from '../contract/index.ts';
import { ConfigError } from '../errors.ts';
import type { Logger } from './logger.ts';

/** Samplers by their OTEL_TRACES_SAMPLER name. */
export const samplerNames = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;
export type SamplerName = (typeof samplerNames)[number];

/** What tracing was asked for. */
export type TracingSettings =
  | { readonly enabled: false }
  | {
      readonly enabled: true;
      readonly sampler: SamplerName;
      /** OTEL_TRACES_SAMPLER_ARG: the ratio of the `traceidratio` samplers. */
      readonly samplerRatio: number;
      /** OTEL_BSP_SCHEDULE_DELAY: ms between two exports. */
      readonly scheduleDelayMs: number;
      /** OTEL_BSP_MAX_QUEUE_SIZE: finished spans kept for export at most; more are dropped. */
      readonly maxQueueSize: number;
      /** OTEL_BSP_MAX_EXPORT_BATCH_SIZE: spans per export request at most. */
      readonly maxExportBatchSize: number;
    };

/** The one OTLP protocol ferry speaks: JSON over HTTP (the exporter package it ships). */
export const OTLP_PROTOCOL = 'http/json';

function positiveInteger(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(value) || value < 1) {
    throw new ConfigError(name, `must be a positive integer, got "${raw}"`);
  }
  return value;
}

/**
 * Reads the OTEL_* variables that decide tracing. Off when OTEL_TRACES_EXPORTER is unset,
 * empty or `none`, or OTEL_SDK_DISABLED is true. (The OpenTelemetry default exporter is
 * `otlp`; ferry makes tracing opt-in instead, so a deployment that never asked for it
 * pays nothing and sends nothing.)
 * @throws ConfigError naming the variable when a value is not one ferry supports.
 */
export function readTracingSettings(env: NodeJS.ProcessEnv): TracingSettings {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return { enabled: false };
  const exporter = env.OTEL_TRACES_EXPORTER?.trim() ?? '';
  if (exporter === '' || exporter === 'none') return { enabled: false };
  if (exporter !== 'otlp') {
    throw new ConfigError('OTEL_TRACES_EXPORTER', `must be otlp or none, got "${exporter}"`);
  }
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = env[name]?.trim();
    if (protocol === undefined || protocol === '') continue;
    if (protocol !== OTLP_PROTOCOL) {
      throw new ConfigError(
        name,
        `must be ${OTLP_PROTOCOL} (the only one ferry ships), got "${protocol}"`,
      );
    }
    break;
  }
  const sampler = env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on';
  if (!(samplerNames as readonly string[]).includes(sampler)) {
    throw new ConfigError(
      'OTEL_TRACES_SAMPLER',
      `must be one of ${samplerNames.join(', ')}, got "${sampler}"`,
    );
  }
  const ratioRaw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const samplerRatio = ratioRaw === undefined || ratioRaw === '' ? 1 : Number(ratioRaw);
  if (!Number.isFinite(samplerRatio) || samplerRatio < 0 || samplerRatio > 1) {
    throw new ConfigError(
      'OTEL_TRACES_SAMPLER_ARG',
      `must be a number from 0 to 1, got "${ratioRaw}"`,
    );
  }
  const maxQueueSize = positiveInteger(env, 'OTEL_BSP_MAX_QUEUE_SIZE', 2048);
  return {
    enabled: true,
    sampler: sampler as SamplerName,
    samplerRatio,
    scheduleDelayMs: positiveInteger(env, 'OTEL_BSP_SCHEDULE_DELAY', 5000),
    maxQueueSize,
    maxExportBatchSize: Math.min(
      maxQueueSize,
      positiveInteger(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE', 512),
    ),
  };
}

/** Where a command span starts: the record it was read from. */
export interface CommandSpanStart {
  /** A bounded operation type (an operation type of the spec, else `unknown`). */
  readonly type: string;
  readonly transport: Transport;
  readonly topic: string;
  readonly partition: number;
  readonly offset: string;
  /** The record's W3C `traceparent` header: the span's parent when valid. */
  readonly traceparent?: string | undefined;
  readonly tracestate?: string | undefined;
  /** When the batch was fetched, ms since the epoch. */
  readonly startMs: number;
}

/** How a command ended, as far as a span tells it: no texts, no phone numbers, no ids. */
export interface CommandSpanEnd {
  readonly stage: string;
  readonly success: boolean;
  readonly attempts: number;
  readonly reconciled?: boolean | undefined;
  readonly delivery?: string | undefined;
}

/** One command's span, from consume to its committed result. Ends exactly once. */
export interface CommandSpan {
  /** The result was committed. */
  committed(end: CommandSpanEnd): void;
  /** The batch ends without a commit and will be read again (a rebalance, a failed commit). */
  reread(): void;
}

/** One HTTP request to the gateway, on behalf of the commands of its envelope. */
export interface HttpCallStart {
  /** The endpoint's URL (no credentials: the key travels in the body). */
  readonly url: string;
  readonly transport: Transport;
  /** `send` carries the operations; `lookup` asks `status` about them. */
  readonly kind: 'send' | 'lookup';
  /** Operations in the envelope. */
  readonly operations: number;
  /** Which request of the envelope this is, from 1. */
  readonly attempt: number;
}

/** How the request ended: an HTTP status, or a failure before one. */
export interface HttpCallEnd {
  readonly statusCode?: number | undefined;
  /** A bounded error class (an error code), never a message. */
  readonly errorType?: string | undefined;
}

export interface HttpCall {
  end(end: HttpCallEnd): void;
}

/** What the pipeline and the dispatcher trace through; absent when tracing is off. */
export interface Tracer {
  command(start: CommandSpanStart): CommandSpan;
  /**
   * One `POST` client span in the trace of each command of the envelope (the spans share
   * their timing and an envelope id): every command's trace shows the request that
   * carried it. Commands without a span (tracing started later) get none.
   */
  http(parents: readonly (CommandSpan | undefined)[], start: HttpCallStart): HttpCall;
}

/** Tracing of one process: its tracer (undefined when off) and its end. */
export interface Tracing {
  readonly tracer: Tracer | undefined;
  /** Exports what is finished and shuts the exporter down. Idempotent. */
  stop(): Promise<void>;
}

const off: Tracing = { tracer: undefined, stop: () => Promise.resolve() };

/**
 * Starts tracing as `settings` say. Off: nothing is imported. On: the SDK and the OTLP
 * exporter are imported now, once.
 */
export async function startTracing(settings: TracingSettings, logger: Logger): Promise<Tracing> {
  if (!settings.enabled) return off;
  const { startOtelTracing } = await import('./otel-tracer.ts');
  return startOtelTracing(settings, logger);
}
