/**
 * Resident memory of a bare Node process importing one module at a time, and the
 * effect of V8 flags: each case runs in a fresh child that imports, collects garbage
 * twice, idles one second and prints VmRSS, VmHWM and the V8 heap. Feeds the per-part
 * table of docs/memory.md. Usage: node bench/module-rss.ts [--runs N, default 3]
 */
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const runsFlag = process.argv.indexOf('--runs');
// Without the flag, indexOf is -1 and argv[0] (node's path) is no count: 3 runs.
const runs = runsFlag < 0 ? 3 : Number(process.argv[runsFlag + 1]);
if (!Number.isInteger(runs) || runs < 1) throw new Error('--runs: a whole number >= 1');

/** Each case: a label, node flags and the specifiers to import. */
const cases: { label: string; flags?: string[]; imports: string[] }[] = [
  { label: 'bare node', imports: [] },
  { label: 'kafkajs', imports: ['kafkajs'] },
  { label: 'undici', imports: ['undici'] },
  { label: 'pino', imports: ['pino'] },
  { label: 'prom-client', imports: ['prom-client'] },
  { label: 'p-queue', imports: ['p-queue'] },
  {
    label: '@grpc/grpc-js + protobuf-es gen',
    imports: ['@grpc/grpc-js', './dist/admin/gen/ferry/admin/v1/admin_pb.js'],
  },
  {
    label: 'OpenTelemetry trace SDK + OTLP exporter',
    imports: ['@opentelemetry/sdk-trace', '@opentelemetry/exporter-trace-otlp-http'],
  },
  {
    label: '@grpc/grpc-js + protobuf-es gen + @grpc/reflection + @grpc/proto-loader',
    imports: [
      '@grpc/grpc-js',
      './dist/admin/gen/ferry/admin/v1/admin_pb.js',
      '@grpc/reflection',
      '@grpc/proto-loader',
    ],
  },
  {
    label: 'secure-json-parse, lz4js, snappyjs',
    imports: ['secure-json-parse', 'lz4js', 'snappyjs'],
  },
  { label: 'daemon modules from src/ (.ts)', imports: ['./src/daemon.ts'] },
  { label: 'daemon modules from dist/ (.js)', imports: ['./dist/daemon.js'] },
];

const script = (imports: string[]) =>
  `${imports.map((m) => `await import(${JSON.stringify(m)});`).join('')}
globalThis.gc?.(); globalThis.gc?.();
await new Promise((r) => setTimeout(r, 1000));
const s = (await import('node:fs')).readFileSync('/proc/self/status', 'utf8');
const kb = (f) => Number(new RegExp('^' + f + ':\\\\s+(\\\\d+)', 'm').exec(s)[1]) / 1024;
const m = process.memoryUsage();
console.log(JSON.stringify({ rss: kb('VmRSS'), hwm: kb('VmHWM'), heap: m.heapUsed / 1048576, heapTotal: m.heapTotal / 1048576 }));`;

const median = (xs: number[]) => xs.toSorted((a, b) => a - b)[Math.floor(xs.length / 2)] ?? 0;
console.log('| case | RSS MiB | peak MiB | heap used MiB | heap total MiB |');
console.log('|---|---:|---:|---:|---:|');
for (const c of cases) {
  const samples: { rss: number; hwm: number; heap: number; heapTotal: number }[] = [];
  for (let i = 0; i < runs; i++) {
    const out = execFileSync(
      process.execPath,
      ['--expose-gc', ...(c.flags ?? []), '--input-type=module', '-e', script(c.imports)],
      { cwd: root, encoding: 'utf8' },
    );
    samples.push(JSON.parse(out.trim().split('\n').at(-1) ?? '{}'));
  }
  const f = (k: keyof (typeof samples)[0]) => median(samples.map((s) => s[k])).toFixed(1);
  console.log(`| ${c.label} | ${f('rss')} | ${f('hwm')} | ${f('heap')} | ${f('heapTotal')} |`);
}
