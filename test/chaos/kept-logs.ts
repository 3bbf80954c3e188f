/**
 * A failed chaos run keeps its folder (replica logs, the broker's data: the results and
 * dead-letter topics are the evidence) and its report, outside the folder it removes.
 */
import { cp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Copies `dir` to `{keepIn}/{name}-{now}` with `report.json` beside the files. @returns the copy's path. */
export async function keepRunFiles(
  dir: string,
  keepIn: string,
  name: string,
  report: unknown,
): Promise<string> {
  const kept = join(keepIn, `${name}-${Date.now()}`);
  await cp(dir, kept, { recursive: true });
  await writeFile(join(kept, 'report.json'), JSON.stringify(report, null, 2));
  return kept;
}

/** The operations port (`/metrics`) a replica's log last said it listens on. */
export function lastOpsPort(log: string): number | undefined {
  const line = log
    .split('\n')
    .filter((l) => l.includes('"msg":"HTTP server listening."') && l.includes('"listener":"ops"'))
    .at(-1);
  const port = line === undefined ? undefined : /"port":(\d+)/.exec(line)?.[1];
  return port === undefined ? undefined : Number(port);
}

/**
 * Saves each running replica's /metrics beside its log (`<name>.metrics.txt`): when the
 * lag does not drain, whether fetching was paused and why, the envelopes in flight and
 * each partition's lag and oldest uncommitted command tell a stall inside ferry from
 * one in the Kafka client.
 */
export async function saveReplicaMetrics(dir: string, names: readonly string[]): Promise<void> {
  await Promise.all(
    names.map(async (name) => {
      try {
        const port = lastOpsPort(await readFile(join(dir, `${name}.log`), 'utf8'));
        if (port === undefined) return;
        const response = await fetch(`http://127.0.0.1:${port}/metrics`, {
          signal: AbortSignal.timeout(3_000),
        });
        await writeFile(join(dir, `${name}.metrics.txt`), await response.text());
      } catch {
        // A replica that is down or does not answer has nothing to tell here.
      }
    }),
  );
}
