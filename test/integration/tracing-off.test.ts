/**
 * Tracing is off by default and then costs nothing: without OTEL_TRACES_EXPORTER=otlp a
 * ferry runs commands end to end without loading the OpenTelemetry SDK and without
 * exporting anything. Node's own module hooks (registered before anything of ferry is
 * imported, which is why ferry's modules are imported dynamically here) list every module
 * the process resolves; the same list shows the SDK once tracing is asked for, so the
 * check can fail.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { registerHooks } from 'node:module';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';

const resolved: string[] = [];
registerHooks({
  resolve(specifier, context, nextResolve) {
    const result = nextResolve(specifier, context);
    resolved.push(result.url);
    return result;
  },
});

/**
 * Modules of the OpenTelemetry SDK, the exporter and their helpers. The API package is not
 * among them: prom-client's default process metrics require it whatever ferry does (it is
 * a no-op until an SDK registers itself, which ferry never does globally).
 */
const openTelemetrySdk = () =>
  resolved.filter(
    (url) => url.includes('/@opentelemetry/') && !url.includes('/@opentelemetry/api/'),
  );

test('without OTEL_TRACES_EXPORTER the OpenTelemetry SDK is not loaded and nothing is exported', async (t) => {
  let exports = 0;
  const receiver = createServer((_req, res) => {
    exports += 1;
    res.writeHead(200).end('{}');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => receiver.close(() => resolve())));
  const endpoint = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

  const { readTracingSettings, startTracing } = await import('../../src/observability/tracing.ts');
  const { command, produce, readRecords, startEmulator, startFerry, testLogger } = await import(
    '../helpers/ferry.ts'
  );
  const { smsOperation } = await import('../fixtures/operations.ts');

  // An endpoint alone does not turn tracing on: the exporter must be asked for.
  const settings = readTracingSettings({ OTEL_EXPORTER_OTLP_ENDPOINT: endpoint });
  assert.deepEqual(settings, { enabled: false });
  const tracing = await startTracing(settings, testLogger());
  assert.equal(tracing.tracer, undefined);

  const emulator = await startEmulator(t);
  const ferry = await startFerry(t, emulator);
  await produce(t, [command(ferry.topics.commands, smsOperation(91_001))]);
  const [result] = await readRecords(t, ferry.topics.results, 1);
  assert.equal(result?.value.success, true);
  await ferry.daemon.stop();
  await tracing.stop();

  assert.ok(
    resolved.some((url) => url.endsWith('/src/pipeline/pipeline.ts')),
    'the hook saw ferry being loaded',
  );
  assert.deepEqual(openTelemetrySdk(), [], 'no OpenTelemetry SDK module was loaded');
  assert.equal(exports, 0);

  // The control: asked for, the SDK and the exporter are loaded (and only then).
  const on = await startTracing(
    readTracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_EXPORTER_OTLP_ENDPOINT: endpoint }),
    testLogger(),
  );
  assert.notEqual(on.tracer, undefined);
  const loaded = openTelemetrySdk().join('\n');
  assert.match(loaded, /@opentelemetry\/sdk-trace\//);
  assert.match(loaded, /@opentelemetry\/exporter-trace-otlp-http\//);
  await on.stop();
});

test('tracing settings name the variable that is wrong', async () => {
  const { readTracingSettings } = await import('../../src/observability/tracing.ts');
  assert.deepEqual(readTracingSettings({}), { enabled: false });
  assert.deepEqual(readTracingSettings({ OTEL_TRACES_EXPORTER: 'none' }), { enabled: false });
  assert.deepEqual(
    readTracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_SDK_DISABLED: 'true' }),
    { enabled: false },
  );
  assert.throws(
    () => readTracingSettings({ OTEL_TRACES_EXPORTER: 'zipkin' }),
    /^ConfigError: OTEL_TRACES_EXPORTER: must be otlp or none/,
  );
  assert.throws(
    () =>
      readTracingSettings({
        OTEL_TRACES_EXPORTER: 'otlp',
        OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
      }),
    /OTEL_EXPORTER_OTLP_PROTOCOL: must be http\/json/,
  );
  assert.throws(
    () => readTracingSettings({ OTEL_TRACES_EXPORTER: 'otlp', OTEL_TRACES_SAMPLER_ARG: '2' }),
    /OTEL_TRACES_SAMPLER_ARG/,
  );
  const on = readTracingSettings({
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_TRACES_SAMPLER: 'parentbased_traceidratio',
    OTEL_TRACES_SAMPLER_ARG: '0.25',
    OTEL_BSP_SCHEDULE_DELAY: '250',
  });
  assert.deepEqual(on, {
    enabled: true,
    sampler: 'parentbased_traceidratio',
    samplerRatio: 0.25,
    scheduleDelayMs: 250,
    maxQueueSize: 2048,
    maxExportBatchSize: 512,
  });
});
