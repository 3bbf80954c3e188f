/**
 * The callback URL of each deployment, followed for real: the overlay is rendered with
 * kustomize, ferry starts with its FERRY_CALLBACK_PUBLIC_URL, and a receipt posted to
 * the hook URL ferry injects (its path, on ferry's own HTTP server, as an ingress would
 * pass it on) must become a status event. A public URL set the old way (ending with
 * /callbacks) makes the gateway post where nothing answers: ferry refuses it at start.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { callbackUrl } from '../../src/callbacks/hook-injection.ts';
import { readConfig } from '../../src/config/config.ts';
import { ConfigError } from '../../src/errors.ts';
import { type KubeObject, kustomizeBuild } from '../deploy/external-tools.ts';
import { readRecords, startEmulator, startFerry } from '../helpers/ferry.ts';

const TOKEN = 'overlay-callback-token';

function publicUrlOf(dir: string): string | undefined {
  const configMap = kustomizeBuild(dir).find((object: KubeObject) => object.kind === 'ConfigMap');
  const data = (configMap as unknown as { data?: Record<string, string> } | undefined)?.data;
  return data?.FERRY_CALLBACK_PUBLIC_URL;
}

test('production overlay: a receipt posted to the hook URL ferry injects becomes a status event', async (t) => {
  const publicUrl = publicUrlOf('deploy/k8s/overlays/production');
  assert.ok(publicUrl, 'the production overlay turns callbacks on');
  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator, {
    FERRY_CALLBACK_PUBLIC_URL: publicUrl,
    FERRY_CALLBACK_TOKEN: TOKEN,
  });
  const hook = new URL(callbackUrl({ publicUrl, token: TOKEN }));
  // The ingress in front of ferry passes the path on unchanged.
  const answer = await fetch(`${ferry.daemon.http.url}${hook.pathname}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ success: true, id: '4242', msg_id: 'm-4242', status: 'DELIVERED' }),
  });
  assert.equal(answer.status, 200, `${hook.pathname} reaches the callback route`);
  const [event] = await readRecords(t, ferry.topics.status, 1);
  assert.equal(event?.value.msg_id, 'm-4242');

  // A path that misses the route is counted, not silently dropped.
  const missed = await fetch(`${ferry.daemon.http.url}/callbacks/callbacks/${TOKEN}`, {
    method: 'POST',
    body: '{}',
  });
  assert.equal(missed.status, 404);
  const counted = await ferry.metrics.registry.getSingleMetricAsString('ferry_callbacks_total');
  assert.match(counted, /outcome="not_found"\} 1/);
});

test('a public URL set the old way, ending with /callbacks, is refused at start', () => {
  assert.throws(
    () =>
      readConfig({
        FERRY_API_KEY: 'k',
        FERRY_SYNC_BASE_URL: 'http://127.0.0.1:1',
        FERRY_ADMIN_LOOPBACK_ONLY: 'true',
        FERRY_CALLBACK_PUBLIC_URL: 'https://ferry.example.com/callbacks',
        FERRY_CALLBACK_TOKEN: TOKEN,
      }),
    (error: unknown) =>
      error instanceof ConfigError && /must not end with \/callbacks/.test(error.message),
  );
});
