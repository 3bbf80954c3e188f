/**
 * Checks of a ferry process against a secured Kafka: a start that must fail with one
 * fatal line and an exit code, no secret in anything it printed, and kcat (librdkafka,
 * a client ferry did not write) reading committed records over SASL_SSL.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import type { TestContext } from 'node:test';
import { promisify } from 'node:util';
import { findTool } from '../deploy/external-tools.ts';
import { spawnFerry } from './ferry-process.ts';

const execFileAsync = promisify(execFile);

export function assertNoSecrets(output: string, secrets: readonly string[]): void {
  for (const secret of secrets) {
    assert.ok(!output.includes(secret), 'no secret in what ferry printed');
  }
}

/**
 * Runs ferry until it exits by itself: the exit code, exactly one fatal line matching
 * `line`, no stack trace, never ready, no secret printed. @returns the fatal line.
 */
export async function failedStartOf(
  t: TestContext,
  env: Record<string, string>,
  expected: {
    readonly exitCode: number;
    readonly line: RegExp;
    readonly secrets: readonly string[];
  },
): Promise<string> {
  const ferry = spawnFerry(t, env);
  const timer = setTimeout(() => ferry.child.kill('SIGKILL'), 60_000);
  const code = await ferry.exited();
  clearTimeout(timer);
  const output = ferry.output();
  assert.equal(code, expected.exitCode, output);
  const fatal = output.split('\n').filter((l) => l.includes('"level":"fatal"'));
  assert.equal(fatal.length, 1, `one fatal line:\n${output}`);
  assert.match(fatal[0] ?? '', expected.line);
  assert.match(fatal[0] ?? '', new RegExp(`"exitCode":${expected.exitCode}`));
  assert.doesNotMatch(output, /\n\s+at \S+ \(/, 'no stack trace');
  assert.doesNotMatch(output, /ferry is running/, 'never ready');
  assertNoSecrets(output, expected.secrets);
  return fatal[0] ?? '';
}

/** kcat over SASL_SSL + SCRAM-SHA-512 at read_committed: `key\tvalue` per record. */
export async function kcatReadCommitted(
  bootstrap: string,
  topic: string,
  login: { readonly username: string; readonly password: string; readonly caFile: string },
): Promise<string[]> {
  const { stdout } = await execFileAsync(
    findTool('kcat'),
    [
      ...['-C', '-b', bootstrap, '-t', topic, '-o', 'beginning', '-e', '-q'],
      ...['-X', 'security.protocol=SASL_SSL', '-X', 'sasl.mechanisms=SCRAM-SHA-512'],
      ...['-X', `sasl.username=${login.username}`, '-X', `sasl.password=${login.password}`],
      ...['-X', `ssl.ca.location=${login.caFile}`],
      ...['-X', 'isolation.level=read_committed', '-f', '%k\\t%s\\n'],
    ],
    { timeout: 30_000, maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout.split('\n').filter((line) => line.length > 0);
}
