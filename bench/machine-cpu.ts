/**
 * Who used the machine's CPU during a run: every process's CPU time from /proc before and
 * after, the largest differences named. On a machine the broker, the gateway emulator, the
 * load generator and the subject share, a run's figures are only as good as what else ran
 * beside it.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** USER_HZ, 100 on every Linux ABI Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

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
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const ticks = Number(fields[11]) + Number(fields[12]);
      snapshot.set(Number(entry), { name, seconds: ticks / CLOCK_TICKS_PER_SECOND });
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
