/**
 * ferry replicas as child processes (`node src/main.ts`, as `npm start` runs it),
 * with a supervisor's behaviour: a replica that exits on its own (a consumer crash,
 * exit 70; a failed start while Kafka is down, exit 1) is started again after
 * `restartDelayMs`. `kill9` is the chaos fault: SIGKILL, then a restart.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const mainFile = fileURLToPath(new URL('../../src/main.ts', import.meta.url));

/** An exit nobody asked for. */
export interface UnexpectedExit {
  readonly replica: string;
  readonly code: number | string;
  readonly atMs: number;
}

export interface ReplicaSetOptions {
  readonly env: Readonly<Record<string, string>>;
  /** Folder for one log file per replica (`<name>.log`, every incarnation appended). */
  readonly logDir: string;
  /** Delay before a replica that exited on its own is started again. Default 1000. */
  readonly restartDelayMs?: number;
}

interface Replica {
  readonly name: string;
  readonly log: WriteStream;
  child: ChildProcess | undefined;
  exit: Promise<unknown> | undefined;
  /** An exit we caused (kill -9, stop): not restarted by the supervisor. */
  expectExit: boolean;
  restartTimer: NodeJS.Timeout | undefined;
}

export class ReplicaSet {
  readonly #options: ReplicaSetOptions;
  readonly #replicas = new Map<string, Replica>();
  readonly unexpectedExits: UnexpectedExit[] = [];
  #stopping = false;
  starts = 0;

  constructor(options: ReplicaSetOptions) {
    this.#options = options;
  }

  /** Process ids of the replicas running now. */
  pids(): number[] {
    return [...this.#replicas.values()].flatMap((r) =>
      r.child?.pid !== undefined && r.child.exitCode === null && r.child.signalCode === null
        ? [r.child.pid]
        : [],
    );
  }

  get names(): string[] {
    return [...this.#replicas.keys()];
  }

  /** Starts a new replica named `name` (its log is `<logDir>/<name>.log`). */
  add(name: string): void {
    if (this.#replicas.has(name)) throw new Error(`replica ${name} exists`);
    const replica: Replica = {
      name,
      log: createWriteStream(join(this.#options.logDir, `${name}.log`), { flags: 'a' }),
      child: undefined,
      exit: undefined,
      expectExit: false,
      restartTimer: undefined,
    };
    this.#replicas.set(name, replica);
    this.#spawn(replica);
  }

  /** SIGKILL, wait for the exit, then start it again after `restartAfterMs`. */
  kill9(name: string, restartAfterMs: number): Promise<void> {
    return this.#stopAndRestart(name, 'SIGKILL', 'kill -9', restartAfterMs);
  }

  /** SIGTERM (a rolling restart's graceful stop), wait for the exit, start it again after `restartAfterMs`. */
  terminate(name: string, restartAfterMs: number): Promise<void> {
    return this.#stopAndRestart(name, 'SIGTERM', 'SIGTERM', restartAfterMs);
  }

  async #stopAndRestart(
    name: string,
    signal: NodeJS.Signals,
    label: string,
    restartAfterMs: number,
  ): Promise<void> {
    const replica = this.#get(name);
    clearTimeout(replica.restartTimer);
    const { child, exit } = replica;
    if (child && child.exitCode === null && child.signalCode === null) {
      replica.expectExit = true;
      replica.log.write(`\n##### chaos: ${label} at ${new Date().toISOString()}\n`);
      child.kill(signal);
      await exit;
    }
    await new Promise((r) => setTimeout(r, restartAfterMs));
    if (!this.#stopping) this.#spawn(replica);
  }

  /**
   * SIGSTOP, then SIGCONT after `forMs`: the replica is frozen as by a long GC pause or
   * a stalled node, its sockets open and its timers stopped, and then goes on.
   */
  async freeze(name: string, forMs: number): Promise<void> {
    const { child, log } = this.#get(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    log.write(`\n##### chaos: SIGSTOP for ${forMs} ms at ${new Date().toISOString()}\n`);
    child.kill('SIGSTOP');
    try {
      await new Promise((r) => setTimeout(r, forMs));
    } finally {
      child.kill('SIGCONT');
      log.write(`\n##### chaos: SIGCONT at ${new Date().toISOString()}\n`);
    }
  }

  /** SIGTERM every replica (a graceful stop), SIGKILL after `graceMs`; closes the logs. */
  async stopAll(graceMs: number): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    await Promise.all(
      [...this.#replicas.values()].map(async (replica) => {
        clearTimeout(replica.restartTimer);
        const { child, exit } = replica;
        if (child && child.exitCode === null && child.signalCode === null) {
          replica.expectExit = true;
          child.kill('SIGTERM');
          const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
          await exit;
          clearTimeout(timer);
        }
        await new Promise((r) => replica.log.end(r));
      }),
    );
  }

  #get(name: string): Replica {
    const replica = this.#replicas.get(name);
    if (!replica) throw new Error(`no replica ${name}`);
    return replica;
  }

  #spawn(replica: Replica): void {
    this.starts += 1;
    replica.expectExit = false;
    replica.log.write(`\n##### chaos: start at ${new Date().toISOString()}\n`);
    const child = spawn(process.execPath, ['--disable-warning=TimeoutNegativeWarning', mainFile], {
      env: { PATH: process.env.PATH ?? '', ...this.#options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // A failed spawn (e.g. node_modules being reinstalled) is reported as an exit, not thrown.
    child.stdout?.pipe(replica.log, { end: false });
    child.stderr?.pipe(replica.log, { end: false });
    replica.child = child;
    // A failed spawn (e.g. node_modules being reinstalled) emits 'error' instead of 'exit': an exit too.
    const ended = new Promise<number | string>((resolve) => {
      child.once('exit', (code, signal) => resolve(code === null ? String(signal) : code));
      child.once('error', (error) => resolve(`spawn failed: ${error.message}`));
    });
    replica.exit = ended.then((exitCode) => {
      replica.log.write(`\n##### chaos: exited with ${exitCode}\n`);
      if (replica.expectExit || this.#stopping) return;
      this.unexpectedExits.push({ replica: replica.name, code: exitCode, atMs: Date.now() });
      replica.restartTimer = setTimeout(
        () => this.#spawn(replica),
        this.#options.restartDelayMs ?? 1000,
      );
    });
  }
}

/**
 * Last resort when the test process ends abruptly: SIGKILL to every process `pids`
 * names (the broker, the replicas), so no JVM or ferry is left behind. Returns the
 * function that removes the hook once the run cleaned up after itself.
 */
export function killOnExit(pids: () => readonly (number | undefined)[]): () => void {
  const killChildren = (): void => {
    for (const pid of pids()) {
      if (pid === undefined) continue;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', killChildren);
  return () => process.removeListener('exit', killChildren);
}
