import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FerryError } from '../../src/errors.ts';
import { mayHaveReachedGateway } from '../../src/upstream/classify-error.ts';
import { NotConnectedError } from '../../src/upstream/http-exchange.ts';

const socketError = (code: string) => Object.assign(new Error(`connect ${code}`), { code });
const wrapped = (code: string) =>
  new FerryError('transport', 'gateway unreachable', {
    cause: new Error('request failed', { cause: socketError(code) }),
  });

test('a failure to connect proves the request never reached the gateway, however wrapped', () => {
  for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN']) {
    assert.equal(mayHaveReachedGateway(wrapped(code)), false, code);
  }
  // Whatever ended a request before its connection existed (the HTTP edge marks it).
  const beforeConnect = new FerryError('transport', 'gateway unreachable', {
    cause: new NotConnectedError(socketError('EHOSTUNREACH')),
  });
  assert.equal(mayHaveReachedGateway(beforeConnect), false);
});

test('a reset, a timeout or an answer that went wrong may come after the gateway acted', () => {
  assert.equal(mayHaveReachedGateway(wrapped('ECONNRESET')), true);
  // A route that drops while a keep-alive connection is open: the request may be there.
  assert.equal(mayHaveReachedGateway(wrapped('EHOSTUNREACH')), true);
  assert.equal(mayHaveReachedGateway(wrapped('ETIMEDOUT')), true);
  assert.equal(mayHaveReachedGateway(new FerryError('transport', 'HTTP 500')), true);
  assert.equal(mayHaveReachedGateway(new Error('anything')), true);
});
