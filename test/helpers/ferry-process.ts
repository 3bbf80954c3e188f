/** Runs ferry as a real child process (`node src/main.ts` as `npm start` does, or another entry). */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { appendFile } from 'node:fs/promises';
import type { TestContext } from 'node:test';
import { fileURLToPath } from 'node:url';

const mainFile = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

export interface FerryProcess {
  readonly child: ChildProcess;
  /** Everything the process wrote, stdout and stderr. */
  output(): string;
  /** Resolves with the exit code (or the signal name) once the process ended. */
  exited(): Promise<number | string>;
}

/**
 * Starts ferry from its sources, or with `args` (node flags and script) in `cwd`, e.g.
 * the compiled build as the container image runs it.
 */
export interface SpawnOptions {
  readonly args?: readonly string[];
  readonly cwd?: string;
}

export function spawnFerry(
  t: TestContext,
  env: Record<string, string>,
  { args = ['--disable-warning=TimeoutNegativeWarning', mainFile], cwd }: SpawnOptions = {},
): FerryProcess {
  const child = spawn(process.execPath, args, {
    ...(cwd ? { cwd } : {}),
    env: { PATH: process.env.PATH ?? '', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString('utf8');
  });
  const exit = once(child, 'exit').then(async ([code, signal]) => {
    // Everything a ferry process logged joins the run's log file, which test/run.ts
    // greps for the API key and phone numbers.
    const logFile = process.env.FERRY_TEST_LOG_FILE;
    if (logFile) await appendFile(logFile, output).catch(() => undefined);
    return code === null ? String(signal) : Number(code);
  });
  t.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exit;
  });
  return { child, output: () => output, exited: () => exit };
}

/** Waits until the process logged `message` (a pino `msg`), or fails after `timeoutMs`. */
export async function waitForLog(
  ferry: FerryProcess,
  message: string,
  timeoutMs = 30_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!ferry.output().includes(`"msg":"${message}"`)) {
    if (Date.now() > deadline)
      throw new Error(`no "${message}" log line; output:\n${ferry.output()}`);
    if (ferry.child.exitCode !== null) throw new Error(`ferry exited early:\n${ferry.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * The lines of a ferry log that say why its Kafka consumer crashed or ferry stopped
 * (kafkajs's `Crash:` line, ferry's fatal line), shortened: for a failure's message.
 */
export function crashLines(output: string): string[] {
  return output
    .split('\n')
    .filter((line) => /Crash: |consumer crashed|ferry stopped/.test(line))
    .slice(0, 3)
    .map((line) => line.slice(0, 400));
}
