/**
 * The published schemas in another language: Python's `jsonschema` package (Debian's
 * python3-jsonschema, installed by tools/install-tools.sh) judges every example as the
 * examples' files say, through test/contract/python/check_examples.py.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { examplesDir, loadExamples, repoRoot } from '../../tools/contract/examples.ts';

interface Verdict {
  readonly name: string;
  readonly kind: 'valid' | 'invalid';
  /** Whether the command schemas accept it; null when the value is not a JSON document. */
  readonly command: boolean | null;
  readonly result: boolean;
}

test("Python's jsonschema accepts every valid example and every expected result, and refuses the invalid ones the files say it does", async () => {
  const { stdout } = await promisify(execFile)(
    'python3',
    [join(import.meta.dirname, 'python/check_examples.py'), join(repoRoot, 'schemas'), examplesDir],
    { timeout: 60_000 },
  );
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
