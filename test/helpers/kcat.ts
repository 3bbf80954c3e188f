/**
 * Reading a topic with kcat (librdkafka), a client ferry did not write: every record's key,
 * headers (kcat's own `%h` rendering, `name=value` joined by commas) and value bytes.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { findTool } from '../deploy/external-tools.ts';
import { testBrokers } from './kafka.ts';

const execFileAsync = promisify(execFile);

export interface KcatRecord {
  readonly partition: number;
  readonly key: string;
  /** The `%h` text kcat printed, e.g. `traceparent=00-…,correlation-id=abc`. */
  readonly headerText: string;
  /** `%h` split into names and values (values here hold no commas). */
  readonly headers: Readonly<Record<string, string>>;
  readonly value: Buffer;
}

function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  if (text === '') return headers;
  for (const pair of text.split(',')) {
    const at = pair.indexOf('=');
    if (at > 0) headers[pair.slice(0, at)] = pair.slice(at + 1);
  }
  return headers;
}

/**
 * Every record of `topic`, all partitions, at read_committed, in the order kcat printed them.
 * The format `%p\t%h\t%k\t%S\t%s\n` gives the value's byte length, so values may hold any bytes.
 */
export async function kcatReadAll(
  topic: string,
  brokers: readonly string[] = testBrokers(),
): Promise<KcatRecord[]> {
  const { stdout } = await execFileAsync(
    findTool('kcat'),
    [
      ...['-C', '-b', brokers.join(','), '-t', topic, '-o', 'beginning', '-e', '-q'],
      ...['-X', 'isolation.level=read_committed', '-f', '%p\\t%h\\t%k\\t%S\\t%s\\n'],
    ],
    { timeout: 30_000, maxBuffer: 16 * 1024 * 1024, encoding: 'buffer' },
  );
  const records: KcatRecord[] = [];
  let at = 0;
  const field = (): string => {
    const end = stdout.indexOf(0x09, at);
    if (end < 0) throw new Error(`kcat output cut at byte ${at}`);
    const text = stdout.subarray(at, end).toString('utf8');
    at = end + 1;
    return text;
  };
  while (at < stdout.length) {
    const partition = Number(field());
    const headerText = field();
    const key = field();
    const size = Number(field());
    // kcat prints -1 as the size of a null value.
    const value = stdout.subarray(at, at + Math.max(0, size));
    at += Math.max(0, size) + 1;
    records.push({ partition, key, headerText, headers: parseHeaders(headerText), value });
  }
  return records;
}
