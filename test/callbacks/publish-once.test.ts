import assert from 'node:assert/strict';
import { test } from 'node:test';
import { PublishOnce } from '../../src/callbacks/publish-once.ts';
import { FerryError } from '../../src/errors.ts';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (e: Error) => void } {
  let resolve = () => {};
  let reject = (_: Error) => {};
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

test('a fingerprint is published once, repeats are duplicates', async () => {
  const once = new PublishOnce(10);
  let calls = 0;
  const publish = async () => {
    calls++;
  };
  assert.equal(await once.run('a', publish, 1000), 'published');
  assert.equal(await once.run('a', publish, 1000), 'duplicate');
  assert.equal(await once.run('b', publish, 1000), 'published');
  assert.equal(calls, 2);
});

test('a concurrent repeat waits for the first publish and is a duplicate', async () => {
  const once = new PublishOnce(10);
  const gate = deferred();
  let calls = 0;
  const publish = async () => {
    calls++;
    await gate.promise;
  };
  const first = once.run('a', publish, 5000);
  const second = once.run('a', publish, 5000);
  gate.resolve();
  assert.deepEqual(await Promise.all([first, second]), ['published', 'duplicate']);
  assert.equal(calls, 1);
});

test('when the first publish fails, a waiting repeat publishes itself', async () => {
  const once = new PublishOnce(10);
  const gate = deferred();
  let calls = 0;
  const publish = async () => {
    calls++;
    if (calls === 1) await gate.promise;
  };
  const first = once.run('a', publish, 5000);
  const second = once.run('a', publish, 5000);
  gate.reject(new FerryError('kafka', 'down'));
  await assert.rejects(first, /down/);
  assert.equal(await second, 'published');
  assert.equal(calls, 2);
});

test('a publish past the deadline fails the caller but is remembered when it lands', async () => {
  const once = new PublishOnce(10);
  const gate = deferred();
  let calls = 0;
  const publish = async () => {
    calls++;
    await gate.promise;
  };
  await assert.rejects(
    once.run('a', publish, 20),
    (error: unknown) => error instanceof FerryError && error.code === 'kafka' && error.retryable,
  );
  // The retry arrives while the first publish is still in flight: it waits, then times out too.
  await assert.rejects(once.run('a', publish, 20), /in time/);
  assert.equal(once.inFlightCount, 1);
  gate.resolve();
  await once.settled();
  assert.equal(await once.run('a', publish, 20), 'duplicate');
  assert.equal(calls, 1);
});

test('a publish that throws synchronously is reported, not thrown past run', async () => {
  const once = new PublishOnce(10);
  const publish = (): Promise<void> => {
    throw new Error('sync boom');
  };
  await assert.rejects(once.run('a', publish, 1000), /sync boom/);
  assert.equal(once.inFlightCount, 0);
});

test('the oldest fingerprints are forgotten past capacity, recent use refreshes', async () => {
  const once = new PublishOnce(2);
  const publish = async () => {};
  await once.run('a', publish, 1000);
  await once.run('b', publish, 1000);
  assert.equal(await once.run('a', publish, 1000), 'duplicate'); // refreshes a
  await once.run('c', publish, 1000); // evicts b
  assert.equal(await once.run('a', publish, 1000), 'duplicate');
  assert.equal(await once.run('b', publish, 1000), 'published');
});

test('capacity must be a positive integer', () => {
  assert.throws(() => new PublishOnce(0), FerryError);
  assert.throws(() => new PublishOnce(1.5), FerryError);
});
