import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Metadata, status } from '@grpc/grpc-js';
import { AdminAuthError, bearerToken, bearerTokenGate } from '../../src/admin/admin-auth.ts';
import { RpcError } from '../../src/admin/admin-status.ts';

function metadata(authorization?: string): Metadata {
  const m = new Metadata();
  if (authorization !== undefined) m.set('authorization', authorization);
  return m;
}

test('the bearer token is read case-insensitively from the scheme', () => {
  assert.equal(bearerToken(metadata('Bearer abc')), 'abc');
  assert.equal(bearerToken(metadata('bearer abc')), 'abc');
  assert.equal(bearerToken(metadata('Basic abc')), undefined);
  assert.equal(bearerToken(metadata()), undefined);
});

test('the gate lets the right token through and refuses others as UNAUTHENTICATED', () => {
  const gate = bearerTokenGate('s3cret');
  assert.equal(gate(metadata('Bearer s3cret'), '/x'), undefined);
  for (const value of [undefined, 'Bearer s3cre', 'Bearer s3cret2', 'Bearer ', 's3cret']) {
    const refused = gate(metadata(value), '/x');
    assert.ok(refused instanceof RpcError, String(value));
    assert.equal(refused.code, status.UNAUTHENTICATED);
  }
});

test('a refusal says whether the token was missing or wrong, for the refusal metric', () => {
  const gate = bearerTokenGate('s3cret');
  const reasons = [undefined, 'Basic s3cret', 'Bearer s3cre', 'Bearer S3CRET'].map((value) => {
    const refused = gate(metadata(value), '/x');
    return refused instanceof AdminAuthError ? refused.reason : refused;
  });
  assert.deepEqual(reasons, ['missing_token', 'missing_token', 'wrong_token', 'wrong_token']);
});

test('an empty admin token is refused at construction', () => {
  assert.throws(() => bearerTokenGate(''), TypeError);
});
