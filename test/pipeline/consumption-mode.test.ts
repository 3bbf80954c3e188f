import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConsumptionMode } from '../../src/pipeline/consumption-mode.ts';

test('a new mode runs: fetching and sending, no pause reason', () => {
  const mode = new ConsumptionMode();
  assert.equal(mode.desiredState, 'running');
  assert.equal(mode.fetching, true);
  assert.equal(mode.sending, true);
  assert.deepEqual(mode.pauseReasons, []);
  assert.equal(mode.phase(5), 'running');
});

test('desired paused: nothing is fetched or sent; the reason is the operator', () => {
  const mode = new ConsumptionMode();
  mode.desired('paused');
  assert.equal(mode.fetching, false);
  assert.equal(mode.sending, false);
  assert.deepEqual(mode.pauseReasons, ['operator']);
  assert.equal(mode.phase(3), 'paused');
});

test('desired draining: nothing new is fetched, what was read is still sent, drained once nothing is in flight', () => {
  const mode = new ConsumptionMode();
  mode.desired('draining');
  assert.equal(mode.fetching, false);
  assert.equal(mode.sending, true);
  assert.deepEqual(mode.pauseReasons, ['draining']);
  assert.equal(mode.phase(4), 'draining');
  assert.equal(mode.phase(0), 'drained');
});

test('accessDenied: this replica stops fetching and sending, the cause is kept', () => {
  const mode = new ConsumptionMode();
  mode.accessDenied('Access denied');
  assert.equal(mode.fetching, false);
  assert.equal(mode.sending, false);
  assert.deepEqual(mode.pauseReasons, ['access_denied']);
  assert.equal(mode.accessDeniedCause, 'Access denied');
  assert.equal(mode.phase(0), 'paused');
});

test('accessRetried: the retry timer lifts the Access-denied stop, the desired state stays', () => {
  const mode = new ConsumptionMode();
  mode.desired('paused');
  mode.accessDenied('Access denied');
  mode.accessRetried();
  assert.equal(mode.accessDeniedCause, undefined);
  assert.deepEqual(mode.pauseReasons, ['operator']);
  assert.equal(mode.sending, false);
});

test('desired paused keeps an Access-denied stop, so both causes show', () => {
  const mode = new ConsumptionMode();
  mode.accessDenied('Access denied');
  mode.desired('paused');
  assert.deepEqual(mode.pauseReasons, ['operator', 'access_denied']);
});

test('desired running clears the Access-denied stop: the operator says the key is fixed', () => {
  const mode = new ConsumptionMode();
  mode.desired('paused');
  mode.accessDenied('Access denied');
  mode.desired('running');
  assert.equal(mode.accessDeniedCause, undefined);
  assert.equal(mode.fetching, true);
  assert.equal(mode.sending, true);
});

test('desired draining clears the Access-denied stop too: what was read may go out', () => {
  const mode = new ConsumptionMode();
  mode.accessDenied('Access denied');
  mode.desired('draining');
  assert.equal(mode.sending, true);
  assert.equal(mode.fetching, false);
  assert.deepEqual(mode.pauseReasons, ['draining']);
});

test('an Access-denied stop during a drain holds the sends and shows both reasons', () => {
  const mode = new ConsumptionMode();
  mode.desired('draining');
  mode.accessDenied('Access denied');
  assert.equal(mode.sending, false);
  assert.deepEqual(mode.pauseReasons, ['draining', 'access_denied']);
  assert.equal(mode.phase(2), 'draining');
});
