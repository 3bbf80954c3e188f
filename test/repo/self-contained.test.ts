/**
 * The repository stands on its own: no tracked file points to a folder beside it that
 * users do not have, names a design document that is not in it, or cites an issue number
 * instead of stating the behaviour. Generated code and the lock file are skipped, and so
 * are binary files (any NUL byte).
 *
 * The patterns are built from parts so that this file does not match them itself.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';

const repoRoot = resolve(import.meta.dirname, '..', '..');
const thisFile = relative(repoRoot, import.meta.filename)
  .split('\\')
  .join('/');

const forbidden: readonly { readonly what: string; readonly pattern: RegExp }[] = [
  {
    what: 'a path outside the repository',
    pattern: new RegExp(['\\.\\.', 'shared'].join('/')),
  },
  {
    what: 'a design document that is not in the repository',
    pattern: new RegExp(['DESIGN', 'md'].join('\\.')),
  },
  { what: 'an issue number', pattern: new RegExp(['\\bissues?', '\\d+\\b'].join(' '), 'i') },
];

const skippedPrefixes = ['src/admin/gen/'];
const skippedFiles = new Set(['package-lock.json', thisFile]);

function trackedFiles(): string[] {
  const out = execFileSync('git', ['ls-files', '-z'], { cwd: repoRoot, encoding: 'utf8' });
  return out.split('\0').filter((path) => path !== '');
}

function isChecked(path: string): boolean {
  return !skippedFiles.has(path) && !skippedPrefixes.some((prefix) => path.startsWith(prefix));
}

/** The text of a tracked file, or `undefined` when it is binary or absent from the work tree. */
function textOf(path: string): string | undefined {
  let bytes: Buffer;
  try {
    bytes = readFileSync(join(repoRoot, path));
  } catch {
    return undefined;
  }
  return bytes.includes(0) ? undefined : bytes.toString('utf8');
}

test('the patterns catch what they are meant to and this file is skipped', () => {
  const samples = [
    ['..', 'shared', 'x.md'].join('/'),
    ['DESIGN', 'md'].join('.'),
    ['Issue', '12'].join(' '),
  ];
  for (const [index, sample] of samples.entries()) {
    assert.ok(forbidden[index]?.pattern.test(sample), sample);
  }
  // Text that only looks like a citation: a longer word ending the same way, or no number.
  const lookalike = [['tissue', '5'].join(' '), 'issues', ['5', 'issues'].join(' ')].join(', ');
  assert.ok(!forbidden.some(({ pattern }) => pattern.test(lookalike)), lookalike);
  assert.equal(isChecked(thisFile), false);
  assert.equal(isChecked('src/admin/gen/ferry/admin/v1/admin_pb.ts'), false);
});

test('no tracked file points outside the repository or cites an issue number', () => {
  const files = trackedFiles().filter(isChecked);
  assert.ok(files.length > 50, `git ls-files listed ${files.length} files`);
  const found: string[] = [];
  for (const path of files) {
    const text = textOf(path);
    if (text === undefined) continue;
    const lines = text.split('\n');
    for (const [index, line] of lines.entries()) {
      for (const { what, pattern } of forbidden) {
        if (pattern.test(line)) found.push(`${path}:${index + 1}: ${what}: ${line.trim()}`);
      }
    }
  }
  assert.deepEqual(found, [], `state the behaviour instead:\n${found.join('\n')}`);
});
