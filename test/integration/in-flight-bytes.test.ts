import assert from 'node:assert/strict';
import { test } from 'node:test';
import { smsOperation } from '../fixtures/operations.ts';
import { command, produce, readRecords, startEmulator, startFerry } from '../helpers/ferry.ts';

/** The backpressure gauge, 1 while fetching is paused for commands or bytes in flight. */
async function backpressure(ferry: Awaited<ReturnType<typeof startFerry>>): Promise<number> {
  const { values } = await ferry.metrics.consumptionPaused.get();
  return values.find((v) => v.labels.reason === 'backpressure')?.value ?? 0;
}

test('bytes in flight past FERRY_MAX_BYTES_IN_FLIGHT pause fetching, far below the command cap', async (t) => {
  // A slow gateway keeps commands in flight; one large fetch brings more bytes than the cap.
  const emulator = await startEmulator(t, { knobs: { latencyMs: 300 } });
  const ferry = await startFerry(t, emulator, {
    FERRY_MAX_BYTES_IN_FLIGHT: String(256 * 1024),
    FERRY_MAX_COMMANDS_IN_FLIGHT: '1000000',
    FERRY_KAFKA_MAX_FETCH_BYTES: String(4 * 1024 * 1024),
    FERRY_KAFKA_MAX_BYTES_PER_PARTITION: String(4 * 1024 * 1024),
  });
  const ids = Array.from({ length: 600 }, (_, i) => 70_000 + i);
  // ~1 KiB per record: 600 KiB in all, over twice the cap.
  const text = 'x'.repeat(1000);
  let paused = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      paused = Math.max(paused, await backpressure(ferry));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  })();
  await produce(
    t,
    ids.map((id) => command(ferry.topics.commands, smsOperation(id, { sms_message: text }))),
  );
  const results = await readRecords(t, ferry.topics.results, ids.length, { timeoutMs: 60_000 });
  sampling = false;
  await sampler;
  assert.equal(results.length, ids.length);
  assert.equal(paused, 1, 'fetching paused on bytes');
  assert.equal(await backpressure(ferry), 0, 'and resumed once they were committed');
});
