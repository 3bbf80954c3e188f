import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ferryEnvOverrides } from '../../bench/subjects.ts';

test('FERRY_BENCH_FERRY_ENV is read as FERRY_ pairs; anything else is refused', () => {
  assert.deepEqual(ferryEnvOverrides(undefined), {});
  assert.deepEqual(ferryEnvOverrides(' FERRY_COMMIT_GAP_MS=0  FERRY_X=a=b '), {
    FERRY_COMMIT_GAP_MS: '0',
    FERRY_X: 'a=b',
  });
  assert.throws(() => ferryEnvOverrides('PATH=/tmp'), /FERRY_NAME=value/);
  assert.throws(() => ferryEnvOverrides('FERRY_COMMIT_GAP_MS'), /FERRY_NAME=value/);
});
