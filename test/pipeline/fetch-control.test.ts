/** Fetching held while final status tracking is full, and only resumed when nothing else holds it. */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GroupConsumer } from '../../src/kafka/kafka-port.ts';
import { createLogger } from '../../src/observability/logger.ts';
import { createMetrics } from '../../src/observability/metrics.ts';
import { FetchControl } from '../../src/pipeline/fetch-control.ts';

function setup() {
  const consumer = {
    paused: false,
    pause() {
      this.paused = true;
    },
    resume() {
      this.paused = false;
    },
  };
  const metrics = createMetrics();
  const control = new FetchControl({
    metrics,
    logger: createLogger({ level: 'silent' }),
    maxCommandsInFlight: 10,
    accessDeniedRetryMs: 0,
    consumer: () => consumer as unknown as GroupConsumer,
    running: () => true,
  });
  const paused = async () =>
    (await metrics.consumptionPaused.get()).values.find((v) => v.labels.reason === 'tracking')
      ?.value;
  return { consumer, control, paused };
}

test('trackingFull pauses fetching and says why; below the bound it resumes', async () => {
  const { consumer, control, paused } = setup();
  control.trackingFull(true);
  assert.equal(consumer.paused, true);
  assert.equal(control.held, true);
  assert.equal(await paused(), 1);
  control.trackingFull(false);
  assert.equal(consumer.paused, false);
  assert.equal(control.held, false);
  assert.equal(await paused(), 0);
});

test('the in-flight budget freeing up does not resume fetching while tracking is full', () => {
  const { consumer, control } = setup();
  control.track(10, 0);
  assert.equal(consumer.paused, true);
  control.trackingFull(true);
  control.track(-10, 0);
  assert.equal(consumer.paused, true, 'still full');
  control.trackingFull(false);
  assert.equal(consumer.paused, false);
});

test('an operator pause outlasts the end of a full tracking', () => {
  const { consumer, control } = setup();
  control.setDesired('paused');
  control.trackingFull(true);
  control.trackingFull(false);
  assert.equal(consumer.paused, true);
  control.setDesired('running');
  assert.equal(consumer.paused, false);
});
