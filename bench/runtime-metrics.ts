/**
 * What ferry's Node runtime did during a run, from the default metrics on its /metrics:
 * garbage collection time by kind (`nodejs_gc_duration_seconds`, read before and after)
 * and the event loop's delay (`nodejs_eventloop_lag_*`; prom-client resets its delay
 * histogram at every read, so the reading after a run covers the time since the one
 * before). A latency tail that the broker and the gateway do not explain shows here:
 * every delay of the event loop delays every command in flight.
 */

export interface RuntimeReading {
  /** Seconds and pauses of garbage collection by kind (major, minor, incremental, weakcb). */
  readonly gcSeconds: ReadonlyMap<string, number>;
  readonly gcCount: ReadonlyMap<string, number>;
  /** Event-loop delay since the previous reading, seconds. */
  readonly lagP99Seconds: number;
  readonly lagMaxSeconds: number;
}

export interface RuntimeFigures {
  readonly gcMs: number;
  readonly gcPauses: number;
  readonly majorGcMs: number;
  readonly majorGcPauses: number;
  readonly lagP99Ms: number;
  readonly lagMaxMs: number;
}

const GC_LINE = /^nodejs_gc_duration_seconds_(sum|count)\{kind="(\w+)"\} (\S+)$/gm;

function gauge(metricsText: string, name: string): number {
  const match = new RegExp(`^${name}(?:\\{\\})? (\\S+)$`, 'm').exec(metricsText);
  return match ? Number(match[1]) : Number.NaN;
}

export function parseRuntime(metricsText: string): RuntimeReading {
  const gcSeconds = new Map<string, number>();
  const gcCount = new Map<string, number>();
  for (const [, field, kind, value] of metricsText.matchAll(GC_LINE)) {
    (field === 'sum' ? gcSeconds : gcCount).set(kind as string, Number(value));
  }
  return {
    gcSeconds,
    gcCount,
    lagP99Seconds: gauge(metricsText, 'nodejs_eventloop_lag_p99_seconds'),
    lagMaxSeconds: gauge(metricsText, 'nodejs_eventloop_lag_max_seconds'),
  };
}

/** An empty reading: a run measured from the process's start. */
export const NO_RUNTIME_READING: RuntimeReading = {
  gcSeconds: new Map(),
  gcCount: new Map(),
  lagP99Seconds: Number.NaN,
  lagMaxSeconds: Number.NaN,
};

function total(map: ReadonlyMap<string, number>): number {
  let sum = 0;
  for (const value of map.values()) sum += value;
  return sum;
}

/** What happened between two readings. */
export function runtimeSince(before: RuntimeReading, after: RuntimeReading): RuntimeFigures {
  const major = (reading: RuntimeReading, of: 'gcSeconds' | 'gcCount') =>
    reading[of].get('major') ?? 0;
  return {
    gcMs: (total(after.gcSeconds) - total(before.gcSeconds)) * 1000,
    gcPauses: total(after.gcCount) - total(before.gcCount),
    majorGcMs: (major(after, 'gcSeconds') - major(before, 'gcSeconds')) * 1000,
    majorGcPauses: major(after, 'gcCount') - major(before, 'gcCount'),
    lagP99Ms: after.lagP99Seconds * 1000,
    lagMaxMs: after.lagMaxSeconds * 1000,
  };
}

export function formatRuntime(figures: RuntimeFigures): string {
  return (
    `GC ${figures.gcMs.toFixed(0)} ms in ${figures.gcPauses} pauses ` +
    `(major ${figures.majorGcPauses}: ${figures.majorGcMs.toFixed(0)} ms), ` +
    `event-loop delay p99 ${figures.lagP99Ms.toFixed(1)} ms, max ${figures.lagMaxMs.toFixed(1)} ms`
  );
}
