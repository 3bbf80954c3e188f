/**
 * An oversized callback (5 MB) posted by three clients ferry did not write, each 100 times in
 * a row and all three at once: curl, Python's http.client and Node's fetch, each in a process
 * of its own, against a real callback receiver and broker. Every post must end with the 413
 * in the sender's hands. http.client reads no answer before its body is written, and fetch
 * reads one while it writes, so both see the 413 only when ferry reads the rest of the body
 * (and drops it) before closing; closed at once, they got a broken pipe about one time in three.
 * The same for the 404 of a wrong token, posted by http.client.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { startReceiverHarness } from '../callbacks/callback-harness.ts';
import { findTool } from '../deploy/external-tools.ts';
import { testBrokers } from '../helpers/kafka.ts';

const execFileAsync = promisify(execFile);
const POSTS = 100;
const WRONG_TOKEN_POSTS = 20;
const BODY_BYTES = 5 * 1024 * 1024;
const CLIENTS = join(import.meta.dirname, '..', 'callbacks', 'clients');

type Outcomes = Record<string, number>;

/** A receipt-shaped JSON body of exactly `bytes` bytes. */
function oversizedBody(bytes: number): Buffer {
  const head = '{"success":true,"id":"5mb","status":"DELIVERED","pad":"';
  const tail = '"}';
  return Buffer.from(head + 'x'.repeat(bytes - head.length - tail.length) + tail);
}

/** curl, once per post (a new process and connection each time): its status, or its failure. */
async function curlPosts(url: string, bodyFile: string): Promise<Outcomes> {
  const outcomes: Outcomes = {};
  for (let i = 0; i < POSTS; i++) {
    let outcome: string;
    try {
      const { stdout } = await execFileAsync(
        findTool('curl'),
        [
          '-sS',
          '-o',
          '/dev/null',
          '-w',
          '%{http_code}',
          '-H',
          'Content-Type: application/json',
          '--data-binary',
          `@${bodyFile}`,
          url,
        ],
        { timeout: 20_000 },
      );
      outcome = stdout;
    } catch (error: unknown) {
      const failed = error as { code?: unknown; stdout?: string };
      outcome = `${failed.stdout || '000'} curl exit ${String(failed.code)}`;
    }
    outcomes[outcome] = (outcomes[outcome] ?? 0) + 1;
  }
  return outcomes;
}

/** A client script that posts `POSTS` times and prints its outcomes as one JSON line. */
async function scriptPosts(command: string, args: readonly string[]): Promise<Outcomes> {
  const { stdout } = await execFileAsync(command, args, { timeout: 50_000 });
  return JSON.parse(stdout) as Outcomes;
}

test('a 5 MB callback is answered 413 to curl, http.client and fetch, 100 times each', async (t) => {
  const h = await startReceiverHarness(t, { brokers: testBrokers(), collect: false });
  const dir = mkdtempSync(join(tmpdir(), 'ferry-oversized-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const bodyFile = join(dir, 'body.json');
  writeFileSync(bodyFile, oversizedBody(BODY_BYTES));

  const started = Date.now();
  const [curl, python, fetch] = await Promise.all([
    curlPosts(h.callbackUrl, bodyFile),
    scriptPosts(findTool('python3'), [
      '-B',
      join(CLIENTS, 'post_oversized.py'),
      h.callbackUrl,
      String(POSTS),
      bodyFile,
    ]),
    scriptPosts(process.execPath, [
      join(CLIENTS, 'post-oversized-fetch.ts'),
      h.callbackUrl,
      String(POSTS),
      bodyFile,
    ]),
  ]);
  const seconds = (Date.now() - started) / 1000;
  t.diagnostic(JSON.stringify({ curl, python, fetch, seconds }));

  const expected = { '413': POSTS };
  assert.deepEqual({ curl, python, fetch }, { curl: expected, python: expected, fetch: expected });
  // Each post was counted, and its kept beginning (the same bytes every time) written once.
  const counted = (await h.callbackCount('unparsed')) + (await h.callbackCount('duplicate'));
  assert.equal(counted, 3 * POSTS);
  assert.equal(await h.unparsedCount(), 1);

  // The 404 of a wrong token is answered before the body too, and reaches http.client alike.
  const wrongToken = await scriptPosts(findTool('python3'), [
    '-B',
    join(CLIENTS, 'post_oversized.py'),
    `${h.server.url}/callbacks/wrong-token`,
    String(WRONG_TOKEN_POSTS),
    bodyFile,
  ]);
  assert.deepEqual(wrongToken, { '404': WRONG_TOKEN_POSTS });
  assert.equal(await h.callbackCount('unauthorized'), WRONG_TOKEN_POSTS);
});
