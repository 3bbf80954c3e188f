/**
 * ferry replicas as child processes for the fleet tests, and the foreign tools that
 * drive and read them: grpcurl (admin API over reflection) and kcat (the control topic).
 */
import { execFile } from 'node:child_process';
import type { TestContext } from 'node:test';
import { type DescMessage, fromJsonString, type MessageShape } from '@bufbuild/protobuf';
import { findTool } from '../deploy/external-tools.ts';
import { type FerryProcess, spawnFerry, waitForLog } from './ferry-process.ts';

export interface Replica {
  readonly ferry: FerryProcess;
  /** host:port of its admin API. */
  readonly address: string;
}

/** Starts one ferry process and waits until it runs; its gRPC port comes from its log. */
export async function startReplica(t: TestContext, env: Record<string, string>): Promise<Replica> {
  const ferry = spawnFerry(t, env);
  await waitForLog(ferry, 'ferry is running', 90_000);
  const port = /"grpcPort":(\d+)/.exec(ferry.output())?.[1];
  if (!port) throw new Error(`no gRPC port in the log:\n${ferry.output()}`);
  return { ferry, address: `127.0.0.1:${port}` };
}

export interface ToolResult {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

function runTool(binary: string, args: readonly string[], timeoutMs = 30_000): Promise<ToolResult> {
  return new Promise((resolve, reject) => {
    execFile(
      binary,
      args,
      { timeout: timeoutMs, encoding: 'utf8', maxBuffer: 16 << 20 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });
}

/** `grpcurl -plaintext -d <body> address ferry.admin.v1.AdminService/<method>`. */
export function grpcurl(address: string, method: string, body: object = {}): Promise<ToolResult> {
  return runTool(
    findTool('grpcurl'),
    [
      '-plaintext',
      '-max-time',
      '60',
      '-d',
      JSON.stringify(body),
      address,
      `ferry.admin.v1.AdminService/${method}`,
    ],
    70_000,
  );
}

/** grpcurl that must succeed: its JSON answer, read as `schema` (protobuf's JSON mapping). */
export async function grpcurlCall<S extends DescMessage>(
  address: string,
  method: string,
  schema: S,
  body: object = {},
): Promise<MessageShape<S>> {
  const result = await grpcurl(address, method, body);
  if (result.code !== 0) {
    throw new Error(
      `grpcurl ${method} exited with ${result.code}: ${result.stdout}${result.stderr}`,
    );
  }
  return fromJsonString(schema, result.stdout);
}

/** Every record of a topic, read with kcat (librdkafka) from the beginning: `key\tvalue` lines. */
export async function kcatRead(brokers: string, topic: string): Promise<[string, string][]> {
  const result = await runTool(findTool('kcat'), [
    '-b',
    brokers,
    '-C',
    '-t',
    topic,
    '-o',
    'beginning',
    '-e',
    '-q',
    '-f',
    '%k\\t%s\\n',
  ]);
  if (result.code !== 0) throw new Error(`kcat exited with ${result.code}: ${result.stderr}`);
  return result.stdout
    .split('\n')
    .filter((line) => line.length > 0)
    .map((line) => {
      const tab = line.indexOf('\t');
      return [line.slice(0, tab), line.slice(tab + 1)];
    });
}

/** Writes one record with kcat; `value` null writes a tombstone (`-Z`: empty is NULL). */
export async function kcatWrite(
  brokers: string,
  topic: string,
  key: string,
  value: string | null,
): Promise<void> {
  const binary = findTool('kcat');
  await new Promise<void>((resolve, reject) => {
    const child = execFile(
      binary,
      ['-b', brokers, '-P', '-t', topic, '-K', '\t', '-Z', '-X', 'acks=all'],
      { timeout: 30_000, encoding: 'utf8' },
      (error, _stdout, stderr) => (error ? reject(new Error(`kcat: ${stderr}`)) : resolve()),
    );
    child.stdin?.end(`${key}\t${value ?? ''}\n`);
  });
}

/** Polls `check` every 250 ms until it returns a value, or fails after `timeoutMs`. */
export async function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error: unknown) {
      last = error;
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `${what}: not within ${timeoutMs} ms${last ? ` (last error: ${String(last)})` : ''}`,
  );
}
