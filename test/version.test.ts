import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';

const root = join(import.meta.dirname, '..');

test('ferry --version prints the package version and exits 0 before reading any configuration', async () => {
  const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
    version: string;
  };
  // No FERRY_* variable at all: the configuration would refuse to start.
  const { stdout, stderr } = await promisify(execFile)(
    process.execPath,
    [join(root, 'src/main.ts'), '--version'],
    { env: { PATH: process.env.PATH ?? '' }, timeout: 30_000 },
  );
  assert.equal(stdout, `ferry ${version}\n`);
  assert.equal(stderr, '');
});
