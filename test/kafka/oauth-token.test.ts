import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { FerryError } from '../../src/errors.ts';
import { jwtTimes, OAuthTokenProvider } from '../../src/kafka/oauth-token.ts';

/** An unsecured JWT (alg none), as Kafka's default OAUTHBEARER validator accepts. */
function jwt(claims: Record<string, unknown>): string {
  const part = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  return `${part({ alg: 'none' })}.${part(claims)}.`;
}

test('a token from a command is kept until 80% of its lifetime, then the command runs again', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-token-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  let now = 1_000_000_000_000;
  const iat = now / 1000;
  // The command counts its runs in a file and prints a token with a 100 s lifetime.
  const counter = join(dir, 'runs');
  const token = jwt({ sub: 'ferry', iat, exp: iat + 100 });
  const command = `echo run >> '${counter}'; printf '%s\\n' '${token}'`;
  const provider = new OAuthTokenProvider({ kind: 'command', command }, () => now);
  const runs = async () => (await readFile(counter, 'utf8')).split('\n').length - 1;

  assert.equal(await provider.token(), token);
  now += 79_000;
  assert.equal(await provider.token(), token);
  assert.equal(await runs(), 1, 'cached before 80%');
  now += 2_000;
  await provider.token();
  assert.equal(await runs(), 2, 'fetched again past 80%');
  assert.deepEqual(jwtTimes(token), { expiresAt: (iat + 100) * 1000, issuedAt: iat * 1000 });
});

test('a token file is read again when due; an expired, empty or failing source is an authentication failure', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-token-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const file = join(dir, 'token');
  const now = Date.now();
  await writeFile(file, 'opaque-token-1\n');
  let clock = now;
  const provider = new OAuthTokenProvider({ kind: 'file', path: file }, () => clock);
  assert.equal(await provider.token(), 'opaque-token-1');
  await writeFile(file, 'opaque-token-2\n');
  assert.equal(await provider.token(), 'opaque-token-1', 'no exp: kept for a minute');
  clock += 61_000;
  assert.equal(await provider.token(), 'opaque-token-2');

  const expired = jwt({ exp: Math.floor(now / 1000) - 10 });
  await writeFile(file, expired);
  const failures = [
    new OAuthTokenProvider({ kind: 'file', path: file }),
    new OAuthTokenProvider({ kind: 'command', command: 'true' }),
    new OAuthTokenProvider({ kind: 'command', command: 'exit 3' }),
    new OAuthTokenProvider({ kind: 'file', path: join(dir, 'missing') }),
  ];
  for (const failing of failures) {
    await assert.rejects(failing.token(), (error: unknown) => {
      assert.ok(error instanceof FerryError);
      assert.equal(error.code, 'kafka_authentication');
      return true;
    });
  }
});
