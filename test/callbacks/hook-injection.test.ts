import assert from 'node:assert/strict';
import { test } from 'node:test';
import { callbackUrl, createHookInjector } from '../../src/callbacks/hook-injection.ts';
import { hookOperationTypes, operationTypes } from '../../src/contract/index.ts';
import { FerryError } from '../../src/errors.ts';

const inject = createHookInjector({ publicUrl: 'https://ferry.example.com/', token: 's3cret' });

test('every type that accepts hook gets the callback URL when it has none', () => {
  for (const type of hookOperationTypes) {
    const operation: Record<string, unknown> = { type, id: 1, phone: 380501234567 };
    assert.equal(inject(operation), true, type);
    assert.equal(operation.hook, 'https://ferry.example.com/callbacks/s3cret', type);
  }
});

test('an async pipeline gets the hook (its REJECTED callback goes there); a sync one does not', () => {
  const sync: Record<string, unknown> = { type: 'pipeline', id: 1, pipeline: ['sms'] };
  assert.equal(inject(sync, { transport: 'sync', headers: {} }), false);
  assert.equal(Object.hasOwn(sync, 'hook'), false);
  const async: Record<string, unknown> = { type: 'pipeline', id: 1, pipeline: ['sms'] };
  assert.equal(inject(async, { transport: 'async', headers: {} }), true);
  assert.equal(async.hook, 'https://ferry.example.com/callbacks/s3cret');
  const own: Record<string, unknown> = { type: 'pipeline', hook: 'https://app.example/cb' };
  assert.equal(inject(own, { transport: 'async', headers: {} }), false);
  assert.equal(own.hook, 'https://app.example/cb');
});

test('allow-listed trace headers ride in the hook query; others and invalid ones do not', () => {
  const carrying = createHookInjector({
    publicUrl: 'https://ferry.example.com',
    token: 's3cret',
    propagateHeaders: ['traceparent', 'tracestate', 'correlation-id'],
  });
  const traceparent = '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01';
  const operation: Record<string, unknown> = { type: 'sms', id: 1 };
  carrying(operation, {
    transport: 'sync',
    headers: {
      traceparent,
      tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
      'Correlation-ID': 'order 7&x=1',
      authorization: 'Bearer secret',
    },
  });
  const hook = new URL(String(operation.hook));
  assert.equal(hook.pathname, '/callbacks/s3cret');
  assert.deepEqual(Object.fromEntries(hook.searchParams), {
    traceparent,
    tracestate: 'congo=t61rcWkgMzE,rojo=00f067aa0ba902b7',
    'correlation-id': 'order 7&x=1',
  });
  const invalid: Record<string, unknown> = { type: 'sms', id: 2 };
  carrying(invalid, {
    transport: 'sync',
    headers: {
      traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01',
      tracestate: 'a=b',
    },
  });
  assert.equal(invalid.hook, 'https://ferry.example.com/callbacks/s3cret', 'nothing to carry');
});

test('pipeline and types without hook get nothing', () => {
  for (const type of operationTypes.filter((t) => !hookOperationTypes.has(t))) {
    const operation: Record<string, unknown> = { type, id: 1 };
    assert.equal(inject(operation), false, type);
    assert.equal(Object.hasOwn(operation, 'hook'), false, type);
  }
  const pipeline: Record<string, unknown> = { type: 'pipeline', id: 1, pipeline: ['sms'] };
  assert.equal(inject(pipeline), false);
  assert.equal(pipeline.hook, undefined);
});

test('an operation with its own hook keeps it', () => {
  const operation: Record<string, unknown> = { type: 'sms', hook: 'https://app.example/cb' };
  assert.equal(inject(operation), false);
  assert.equal(operation.hook, 'https://app.example/cb');
});

test('operations without a string type are left alone', () => {
  const operation: Record<string, unknown> = { id: 1 };
  assert.equal(inject(operation), false);
  assert.deepEqual(operation, { id: 1 });
});

test('the token is URL-encoded and a base path is kept', () => {
  assert.equal(
    callbackUrl({ publicUrl: 'https://example.com/ferry//', token: 'a/b c?d#e' }),
    'https://example.com/ferry/callbacks/a%2Fb%20c%3Fd%23e',
  );
  assert.equal(
    callbackUrl({ publicUrl: 'http://127.0.0.1:8080', token: 't' }),
    'http://127.0.0.1:8080/callbacks/t',
  );
});

test('unusable options are refused at creation', () => {
  for (const options of [
    { publicUrl: 'not a url', token: 't' },
    { publicUrl: 'ftp://example.com', token: 't' },
    { publicUrl: 'https://example.com/?q=1', token: 't' },
    { publicUrl: 'https://example.com', token: '' },
  ]) {
    assert.throws(
      () => createHookInjector(options),
      (error: unknown) => error instanceof FerryError && error.code === 'config',
      JSON.stringify(options),
    );
  }
});
