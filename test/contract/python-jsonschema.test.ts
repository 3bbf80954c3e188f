/**
 * The published schemas in another language: Python's `jsonschema` package (Debian's
 * python3-jsonschema, installed by tools/install-tools.sh) judges every example as the
 * examples' files say, through test/contract/python/check_examples.py, and command texts
 * whose ids JavaScript cannot hold, through check_values.py (Python reads integers exactly).
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { examplesDir, loadExamples, repoRoot } from '../../tools/contract/examples.ts';

const execFileAsync = promisify(execFile);
/** `-B`: the scripts import a module of their folder, and no `__pycache__` may be left there. */
const python = (script: string, args: readonly string[], input?: string) => {
  const run = execFileAsync(
    'python3',
    ['-B', join(import.meta.dirname, 'python', script), ...args],
    {
      timeout: 60_000,
    },
  );
  run.child.stdin?.end(input ?? '');
  return run;
};

interface Verdict {
  readonly name: string;
  readonly kind: 'valid' | 'invalid';
  /** Whether the command schemas accept it; null when the value is not a JSON document. */
  readonly command: boolean | null;
  readonly result: boolean;
}

test("Python's jsonschema accepts every valid example and every expected result, and refuses the invalid ones the files say it does", async () => {
  const { stdout } = await python('check_examples.py', [join(repoRoot, 'schemas'), examplesDir]);
  const verdicts = stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as Verdict);
  const examples = await loadExamples();
  assert.deepEqual(
    verdicts.map((verdict) => verdict.name).sort(),
    examples.map((example) => example.name).sort(),
  );
  for (const example of examples) {
    const verdict = verdicts.find((candidate) => candidate.name === example.name);
    assert.ok(verdict);
    assert.equal(verdict.result, true, `${example.name}: expected_result passes`);
    if (example.kind === 'valid') {
      assert.equal(verdict.command, true, `${example.name} passes`);
    } else {
      const caught = verdict.command === false;
      assert.equal(caught, example.schema_catches, `${example.name}: schema_catches`);
    }
  }
});

test("Python's jsonschema, reading ids with every digit, refuses one past 2^53 - 1 either way and takes the bound", async () => {
  const sms = (id: string) =>
    `{"type":"sms","id":${id},"phone":79001234567,"sms_message":"Hello from ferry","sms_signature":"FERRY"}`;
  const ids = [
    '9007199254740991',
    '-9007199254740991',
    '9007199254740992',
    '9007199254740993',
    '-9007199254740993',
    '123456789012345678901234567890',
  ];
  const { stdout } = await python(
    'check_values.py',
    [join(repoRoot, 'schemas'), 'command.schema.json'],
    ids.map((id) => `${sms(id)}\n`).join(''),
  );
  assert.deepEqual(
    stdout.split('\n').filter((line) => line !== ''),
    ['true', 'true', 'false', 'false', 'false', 'false'],
  );
});
