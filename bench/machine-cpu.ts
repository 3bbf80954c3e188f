/**
 * Who used the machine's CPU during a run: every process's CPU time from /proc before and
 * after, the largest differences named. On a machine the broker, the gateway emulator, the
 * load generator and the subject share, a run's figures are only as good as what else ran
 * beside it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { parseStat } from './proc-stats.ts';

export type CpuSnapshot = ReadonlyMap<number, { readonly name: string; readonly seconds: number }>;

/** CPU seconds so far of every process this user can read. */
export function cpuSnapshot(): CpuSnapshot {
  const snapshot = new Map<number, { name: string; seconds: number }>();
  let entries: string[];
  try {
    entries = readdirSync('/proc');
  } catch {
    return snapshot;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const { name, cpuSeconds } = parseStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      snapshot.set(Number(entry), { name, seconds: cpuSeconds });
    } catch {
      // Gone since the listing.
    }
  }
  return snapshot;
}

/** Processes that used the most CPU between two snapshots (one started meanwhile counts from 0). */
export function busiestBetween(
  before: CpuSnapshot,
  after: CpuSnapshot,
  count = 5,
): { pid: number; name: string; seconds: number }[] {
  const used: { pid: number; name: string; seconds: number }[] = [];
  for (const [pid, now] of after) {
    const seconds = now.seconds - (before.get(pid)?.seconds ?? 0);
    if (seconds > 0) used.push({ pid, name: now.name, seconds });
  }
  return used.sort((a, b) => b.seconds - a.seconds).slice(0, count);
}

export function formatBusiest(busiest: readonly { pid: number; name: string; seconds: number }[]) {
  return busiest.map((p) => `${p.name}[${p.pid}] ${p.seconds.toFixed(2)} s`).join(', ');
}
