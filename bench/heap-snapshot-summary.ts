/**
 * The constructors holding most of a V8 heap snapshot (.heapsnapshot, JSON): self size
 * and count per node name, largest first. A coarse view, enough to see whether records,
 * envelopes or results outlive their commit after a drain.
 */
import { readFileSync } from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

/** A table of the `top` node names by retained self size. */
export function summariseSnapshot(path: string, top: number): string {
  const data = JSON.parse(readFileSync(path, 'utf8')) as Snapshot;
  const fields = data.snapshot.meta.node_fields;
  const types = data.snapshot.meta.node_types[0];
  const width = fields.length;
  const typeAt = fields.indexOf('type');
  const nameAt = fields.indexOf('name');
  const sizeAt = fields.indexOf('self_size');
  const totals = new Map<string, { count: number; bytes: number }>();
  let all = 0;
  for (let i = 0; i < data.nodes.length; i += width) {
    const type = types[data.nodes[i + typeAt] ?? 0] ?? '?';
    const name =
      type === 'object' || type === 'closure'
        ? data.strings[data.nodes[i + nameAt] ?? 0]
        : `(${type})`;
    const bytes = data.nodes[i + sizeAt] ?? 0;
    all += bytes;
    const entry = totals.get(name ?? '?') ?? { count: 0, bytes: 0 };
    entry.count += 1;
    entry.bytes += bytes;
    totals.set(name ?? '?', entry);
  }
  const rows = [...totals].sort((a, b) => b[1].bytes - a[1].bytes).slice(0, top);
  return [
    `heap snapshot: ${(all / 1024 / 1024).toFixed(1)} MiB in ${data.nodes.length / width} objects; largest by self size:`,
    ...rows.map(
      ([name, t]) =>
        `  ${(t.bytes / 1024).toFixed(0).padStart(8)} KiB ${String(t.count).padStart(8)}  ${name}`,
    ),
  ].join('\n');
}
