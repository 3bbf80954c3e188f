/**
 * Prints the top self-time entries of a V8 CPU profile (`node --cpu-prof`), by
 * function and script, so a profile can be read without DevTools.
 *
 * Usage: node bench/profile-summary.ts <file.cpuprofile> [count=25]
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
}

interface CpuProfile {
  readonly nodes: readonly ProfileNode[];
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
  readonly startTime: number;
  readonly endTime: number;
}

export interface SelfTimeEntry {
  readonly functionName: string;
  readonly url: string;
  readonly selfMs: number;
  readonly percent: number;
}

/** Self time per function+url (summed over every node of that function), largest first. */
export function selfTimes(profile: CpuProfile): SelfTimeEntry[] {
  const frameOf = new Map<number, ProfileNode['callFrame']>();
  for (const node of profile.nodes) frameOf.set(node.id, node.callFrame);
  const microsByKey = new Map<string, { functionName: string; url: string; micros: number }>();
  let total = 0;
  profile.samples.forEach((nodeId, index) => {
    // A sample's time is the delta to the next sample (V8's convention).
    const micros = profile.timeDeltas[index + 1] ?? 0;
    total += micros;
    const frame = frameOf.get(nodeId);
    const functionName = frame?.functionName || '(anonymous)';
    const url = frame?.url ?? '';
    const key = `${functionName}\u0000${url}`;
    const entry = microsByKey.get(key) ?? { functionName, url, micros: 0 };
    entry.micros += micros;
    microsByKey.set(key, entry);
  });
  return [...microsByKey.values()]
    .sort((a, b) => b.micros - a.micros)
    .map((e) => ({
      functionName: e.functionName,
      url: e.url,
      selfMs: e.micros / 1000,
      percent: total > 0 ? (100 * e.micros) / total : 0,
    }));
}

function shortUrl(url: string): string {
  const modules = url.lastIndexOf('node_modules/');
  if (modules >= 0) return url.slice(modules + 'node_modules/'.length);
  const src = url.indexOf('/src/');
  if (src >= 0) return url.slice(src + 1);
  return url.replace(/^file:\/\//, '');
}

if (import.meta.main) {
  const file = process.argv[2];
  if (!file) {
    process.stderr.write('usage: node bench/profile-summary.ts <file.cpuprofile> [count]\n');
    process.exit(1);
  }
  const count = Number(process.argv[3] ?? 25);
  const profile = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const entries = selfTimes(profile);
  const totalMs = entries.reduce((sum, e) => sum + e.selfMs, 0);
  process.stdout.write(`${file}: ${(totalMs / 1000).toFixed(1)} s sampled\n`);
  process.stdout.write('  self ms      %  function  (script)\n');
  for (const e of entries.slice(0, count)) {
    process.stdout.write(
      `${e.selfMs.toFixed(0).padStart(9)} ${e.percent.toFixed(1).padStart(6)}  ${e.functionName}  (${shortUrl(e.url)})\n`,
    );
  }
}
