/**
 * Resource use of a child process from Linux procfs: peak resident memory
 * (VmHWM in /proc/<pid>/status) and CPU time (utime + stime in /proc/<pid>/stat).
 */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of /proc/<pid>/stat times: USER_HZ, 100 on every Linux ABI Node runs on. */
const CLOCK_TICKS_PER_SECOND = 100;

export interface ProcessUsage {
  /** Peak resident set size so far (VmHWM), bytes. */
  readonly peakRssBytes: number;
  /** Current resident set size (VmRSS), bytes. */
  readonly rssBytes: number;
  /** User plus system CPU time so far, seconds. */
  readonly cpuSeconds: number;
  /**
   * Times the main thread gave up the CPU of its own accord so far (voluntary context
   * switches): for an event loop, about once per wake-up from waiting for I/O or a timer.
   */
  readonly mainThreadWaits: number;
}

/** The number after `field:` in a /proc status text, followed by `unit` (a pattern) if given. */
function countField(status: string, field: string, unit = ''): number {
  const match = new RegExp(`^${field}:\\s+(\\d+)${unit}`, 'm').exec(status);
  return match?.[1] ? Number(match[1]) : Number.NaN;
}

function kilobytesField(status: string, field: string): number {
  return countField(status, field, '\\s+kB') * 1024;
}

/**
 * The command name and CPU time (user + system, seconds) in the text of a
 * /proc/<pid>/stat or /proc/<pid>/task/<tid>/stat file.
 */
export function parseStat(stat: string): { readonly name: string; readonly cpuSeconds: number } {
  // The command name (field 2) may hold spaces and parentheses: fields are counted after the last ')'.
  const nameEnd = stat.lastIndexOf(')');
  const fields = stat.slice(nameEnd + 2).split(' ');
  // After the name, field 3 (state) is index 0, so utime (14) is index 11 and stime (15) index 12.
  const ticks = Number(fields[11]) + Number(fields[12]);
  return {
    name: stat.slice(stat.indexOf('(') + 1, nameEnd),
    cpuSeconds: ticks / CLOCK_TICKS_PER_SECOND,
  };
}

/**
 * Reads the usage of process `pid`; undefined when the process is gone (or procfs is absent).
 */
export function readProcessUsage(pid: number): ProcessUsage | undefined {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const { cpuSeconds } = parseStat(readFileSync(`/proc/${pid}/stat`, 'utf8'));
    const mainThread = readFileSync(`/proc/${pid}/task/${pid}/status`, 'utf8');
    return {
      peakRssBytes: kilobytesField(status, 'VmHWM'),
      rssBytes: kilobytesField(status, 'VmRSS'),
      cpuSeconds,
      mainThreadWaits: countField(mainThread, 'voluntary_ctxt_switches'),
    };
  } catch {
    return undefined;
  }
}
