/**
 * A failed chaos run keeps its folder (replica logs, the broker's data: the results and
 * dead-letter topics are the evidence) and its report, outside the folder it removes.
 */
import { cp, writeFile } from 'node:fs/promises';
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
