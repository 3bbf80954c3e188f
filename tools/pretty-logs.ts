/**
 * `make run`'s readable logs: ferry always writes one JSON object a line (what log
 * pipelines parse, and what the image and `npm start` print); a developer's terminal
 * gets the same lines through pino-pretty. Redaction happens inside ferry before a line
 * is written, so this only reformats what the JSON already holds: it cannot show an API
 * key, token or phone number that the JSON line would not.
 */
import { createInterface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { prettyFactory } from 'pino-pretty';

/** How {@link prettyLogLines} formats. */
export interface PrettyLogOptions {
  /** ANSI colours (a terminal); off for a file or a pipe. */
  readonly colorize: boolean;
}

/** Turns one line into its readable form; a line that is not JSON comes back unchanged. */
export function prettyLogLine(options: PrettyLogOptions): (line: string) => string {
  return prettyFactory({
    colorize: options.colorize,
    translateTime: 'SYS:HH:MM:ss.l',
    // The same on every line of one process: noise in a terminal, kept in the JSON.
    ignore: 'pid,hostname,service,component',
    messageFormat: '{if component}[{component}] {end}{msg}',
  });
}

/**
 * Copies `input` to `output` line by line, prettified; resolves when `input` ends, so a
 * caller can wait for the last lines (a drain's) before it exits.
 */
export async function prettyLogLines(
  input: Readable,
  output: Writable,
  options: PrettyLogOptions,
): Promise<void> {
  const pretty = prettyLogLine(options);
  for await (const line of createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY })) {
    output.write(pretty(line));
  }
}
