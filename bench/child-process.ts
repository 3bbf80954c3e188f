/**
 * The benchmark's child processes (emulator, ferry, baseline, the peer): spawned with Node 24
 * (or the given executable),
 * output to a log file (so the parent spends no CPU on it), measured through procfs,
 * stopped with SIGTERM then SIGKILL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { type ProcessUsage, readProcessUsage } from './proc-stats.ts';

export interface BenchChildOptions {
  readonly name: string;
  /** The executable; Node (the one running the bench) when unset. */
  readonly command?: string;
  /** Node flags and the script, e.g. ['--cpu-prof', 'src/main.ts'], or the command's arguments. */
  readonly args: readonly string[];
  readonly env: Readonly<Record<string, string>>;
  /** Where stdout and stderr go. */
  readonly logFile: string;
  readonly cwd: string;
}

/** A running child process of the benchmark. */
export class BenchChild {
  readonly name: string;
  readonly logFile: string;
  readonly #child: ChildProcess;
  readonly #exit: Promise<unknown>;
  #lastUsage: ProcessUsage | undefined;

  constructor(options: BenchChildOptions) {
    this.name = options.name;
    this.logFile = options.logFile;
    const out = openSync(options.logFile, 'a');
    this.#child = spawn(options.command ?? process.execPath, [...options.args], {
      cwd: options.cwd,
      env: { PATH: process.env.PATH ?? '', ...options.env },
      stdio: ['ignore', out, out],
    });
    closeSync(out);
    this.#exit = once(this.#child, 'exit');
  }

  get pid(): number {
    return this.#child.pid ?? -1;
  }

  get alive(): boolean {
    return this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Peak RSS and CPU so far; after exit, the last reading taken. */
  usage(): ProcessUsage | undefined {
    const usage = readProcessUsage(this.pid);
    if (usage) this.#lastUsage = usage;
    return usage ?? this.#lastUsage;
  }

  /** The log's last lines, for error messages. */
  tail(lines = 20): string {
    if (!existsSync(this.logFile)) return '';
    return readFileSync(this.logFile, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  }

  /**
   * Polls `probe` every 100 ms until it returns true.
   * @throws Error when the process exits or `timeoutMs` passes first.
   */
  async waitUntil(what: string, probe: () => Promise<boolean>, timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      if (!this.alive) throw new Error(`${this.name} exited before ${what}:\n${this.tail()}`);
      if (await probe().catch(() => false)) return;
      await sleep(100);
    }
    throw new Error(`${this.name}: no ${what} within ${timeoutMs} ms:\n${this.tail()}`);
  }

  /** Resolves once the log holds `text`. */
  async waitForLog(text: string, timeoutMs: number): Promise<void> {
    await this.waitUntil(
      `"${text}" in its log`,
      async () => existsSync(this.logFile) && readFileSync(this.logFile, 'utf8').includes(text),
      timeoutMs,
    );
  }

  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  async stop(graceMs = 20_000): Promise<void> {
    this.usage();
    if (!this.alive) return;
    this.#child.kill('SIGTERM');
    const killer = setTimeout(() => this.#child.kill('SIGKILL'), graceMs);
    await this.#exit;
    clearTimeout(killer);
  }
}

/** Resolves true when `url` answers HTTP 200. */
export async function answers200(url: string): Promise<boolean> {
  const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
  await response.body?.cancel();
  return response.status === 200;
}
