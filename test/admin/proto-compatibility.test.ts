/**
 * The admin proto as a product: `buf lint` is clean, and `buf breaking` finds no
 * breaking change against the last released proto (proto/released/v0.1.0.binpb, a
 * buf image built from the proto as released). The check is shown able to fail:
 * a copy of the proto with one field renumbered is reported as breaking.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';

const root = join(import.meta.dirname, '../..');
const buf = join(root, 'node_modules/.bin/buf');
const released = join(root, 'proto/released/v0.1.0.binpb');

interface BufResult {
  readonly code: number;
  readonly output: string;
}

function runBuf(args: readonly string[], cwd = root): Promise<BufResult> {
  return new Promise((resolve, reject) => {
    execFile(buf, args, { cwd, timeout: 120_000 }, (error, stdout, stderr) => {
      if (error && typeof error.code !== 'number') reject(error);
      else resolve({ code: error ? Number(error.code) : 0, output: `${stdout}${stderr}` });
    });
  });
}

test('buf lint finds nothing in proto/', async () => {
  const result = await runBuf(['lint']);
  assert.equal(result.code, 0, result.output);
  assert.equal(result.output.trim(), '');
});

test('the proto has no breaking change against the released v0.1.0 image', async () => {
  const result = await runBuf(['breaking', 'proto', '--against', released]);
  assert.equal(result.code, 0, result.output);
  assert.equal(result.output.trim(), '');
});

test('a renumbered field is reported as breaking (the check can fail)', async (t) => {
  const copy = await mkdtemp(join(tmpdir(), 'ferry-breaking-'));
  t.after(() => rm(copy, { recursive: true, force: true }));
  await cp(join(root, 'proto'), join(copy, 'proto'), { recursive: true });
  await cp(join(root, 'buf.yaml'), join(copy, 'buf.yaml'));
  const file = join(copy, 'proto/ferry/admin/v1/admin.proto');
  const text = await readFile(file, 'utf8');
  const renumbered = text.replace(
    /(message GetBalanceResponse \{[^}]*?string currency = )2;/,
    '$13;',
  );
  assert.notEqual(renumbered, text, 'the fixture edit applies');
  await writeFile(file, renumbered);

  const result = await runBuf(['breaking', 'proto', '--against', released], copy);
  assert.notEqual(result.code, 0, result.output);
  assert.match(result.output, /GetBalanceResponse/);
  assert.match(result.output, /currency/);
});
