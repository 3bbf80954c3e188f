/**
 * OpenTelemetry tracing, end to end: ferry (`node src/main.ts`, configured by the standard
 * OTEL_* variables) exports over OTLP/HTTP JSON to a receiver this test runs on loopback.
 * The receiver decodes the OTLP JSON itself (no ferry code, no OpenTelemetry code): one
 * trace per command, the record's `traceparent` as the command span's parent, and the
 * gateway request as a `POST` child span of every command it carried, exported when ferry
 * shuts down.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type TestContext, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { FIXTURE_PHONE, smsOperation } from '../fixtures/operations.ts';
import {
  command,
  produce,
  readRecords,
  startEmulator,
  startFerry,
  TEST_API_KEY,
  testTopics,
} from '../helpers/ferry.ts';
import { spawnFerry, waitForLog } from '../helpers/ferry-process.ts';

/** An OTLP/JSON attribute value (only the kinds ferry's spans use). */
interface AnyValue {
  readonly stringValue?: string;
  readonly intValue?: string | number;
  readonly boolValue?: boolean;
  readonly doubleValue?: number;
}

interface OtlpSpan {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId?: string;
  readonly name: string;
  readonly kind: number;
  readonly startTimeUnixNano: string;
  readonly endTimeUnixNano: string;
  readonly attributes?: readonly { key: string; value: AnyValue }[];
}

interface ExportRequest {
  readonly resourceSpans: readonly {
    readonly resource?: { attributes?: readonly { key: string; value: AnyValue }[] };
    readonly scopeSpans: readonly { scope?: { name?: string }; spans: readonly OtlpSpan[] }[];
  }[];
}

/** A decoded span: ids as lowercase hex, attributes as plain values. */
interface Span {
  readonly traceId: string;
  readonly spanId: string;
  readonly parentSpanId: string;
  readonly name: string;
  readonly kind: number;
  readonly start: bigint;
  readonly end: bigint;
  readonly attributes: Readonly<Record<string, string | number | boolean>>;
  readonly service: string;
}

function plain(value: AnyValue): string | number | boolean {
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.doubleValue !== undefined) return value.doubleValue;
  throw new Error(`an attribute value of an unexpected kind: ${JSON.stringify(value)}`);
}

function attributesOf(list: readonly { key: string; value: AnyValue }[] | undefined) {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, plain(value)]));
}

/** OTLP/JSON carries ids as hex (the protobuf JSON mapping's exception for trace and span ids). */
function decode(request: ExportRequest): Span[] {
  return request.resourceSpans.flatMap((resourceSpans) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
    return resourceSpans.scopeSpans.flatMap((scope) =>
      scope.spans.map((span) => ({
        traceId: span.traceId.toLowerCase(),
        spanId: span.spanId.toLowerCase(),
        parentSpanId: (span.parentSpanId ?? '').toLowerCase(),
        name: span.name,
        kind: span.kind,
        start: BigInt(span.startTimeUnixNano),
        end: BigInt(span.endTimeUnixNano),
        attributes: attributesOf(span.attributes),
        service,
      })),
    );
  });
}

/** The OTLP/HTTP receiver of the test: every POST body to /v1/traces, kept raw and decoded. */
async function startReceiver(t: TestContext) {
  const bodies: string[] = [];
  const contentTypes: string[] = [];
  const read = async (req: IncomingMessage) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };
  const server = createServer((req, res) => {
    void read(req).then((body) => {
      if (req.method !== 'POST' || req.url !== '/v1/traces') {
        res.writeHead(404).end();
        return;
      }
      bodies.push(body);
      contentTypes.push(String(req.headers['content-type']));
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    bodies,
    contentTypes,
    spans: () => bodies.flatMap((body) => decode(JSON.parse(body) as ExportRequest)),
  };
}

const hex = (bytes: number) => randomBytes(bytes).toString('hex');

test('one trace per command: the record traceparent is the parent, the gateway POST a child', async (t) => {
  const receiver = await startReceiver(t);
  const emulator = await startEmulator(t);
  // An in-process ferry creates the topics and stops; the traced one is a real process.
  const setup = await startFerry(t, emulator, {}, testTopics());
  await setup.daemon.stop();
  const ferry = spawnFerry(t, {
    ...setup.env,
    FERRY_BATCH_LINGER_MS: '200',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
    OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    // Nothing is exported on a timer during the test: the spans leave at shutdown.
    OTEL_BSP_SCHEDULE_DELAY: '600000',
    OTEL_SERVICE_NAME: 'ferry-tracing-test',
  });
  await waitForLog(ferry, 'ferry is running');

  // Three commands continue traces of their producers; a fourth brings none, a fifth a
  // malformed one (ignored: it starts a trace of its own).
  const parents = [0, 1, 2].map(() => ({ traceId: hex(16), spanId: hex(8) }));
  const ids = [81_001, 81_002, 81_003, 81_004, 81_005];
  await produce(t, [
    ...parents.map((parent, index) =>
      command(setup.topics.commands, smsOperation(ids[index] as number), {
        traceparent: `00-${parent.traceId}-${parent.spanId}-01`,
        tracestate: 'vendor=abc',
      }),
    ),
    command(setup.topics.commands, smsOperation(ids[3] as number)),
    command(setup.topics.commands, smsOperation(ids[4] as number), {
      traceparent: `00-${'0'.repeat(32)}-${hex(8)}-01`,
    }),
  ]);
  const results = await readRecords(t, setup.topics.results, 5);
  assert.ok(results.every((result) => result.value.success === true));

  // SIGTERM: ferry drains, commits, then flushes the spans it holds before it exits.
  await sleep(300);
  assert.equal(receiver.bodies.length, 0, 'nothing exported before the shutdown');
  ferry.child.kill('SIGTERM');
  assert.equal(await ferry.exited(), 0);
  const spans = receiver.spans();
  const commandSpans = spans.filter((span) => span.name === 'ferry.command sms');
  assert.equal(commandSpans.length, 5, 'one command span per command, none read again');
  assert.ok(receiver.contentTypes.every((type) => type.startsWith('application/json')));

  for (const parent of parents) {
    const inTrace = spans.filter((span) => span.traceId === parent.traceId);
    const [commandSpan, ...others] = inTrace.filter((span) => span.name === 'ferry.command sms');
    assert.ok(commandSpan, `a command span in trace ${parent.traceId}`);
    assert.equal(others.length, 0);
    assert.equal(commandSpan.parentSpanId, parent.spanId, 'the traceparent span is the parent');
    assert.equal(commandSpan.kind, 5, 'SPAN_KIND_CONSUMER');
    assert.equal(commandSpan.service, 'ferry-tracing-test');
    assert.equal(commandSpan.attributes['messaging.system'], 'kafka');
    assert.equal(commandSpan.attributes['messaging.destination.name'], setup.topics.commands);
    assert.equal(commandSpan.attributes['ferry.result.stage'], 'upstream');
    assert.equal(commandSpan.attributes['ferry.result.success'], true);

    const posts = inTrace.filter((span) => span.name === 'POST');
    assert.equal(posts.length, 1, 'one gateway request carried this command');
    const post = posts[0] as Span;
    assert.equal(post.parentSpanId, commandSpan.spanId);
    assert.equal(post.kind, 3, 'SPAN_KIND_CLIENT');
    assert.equal(post.attributes['http.request.method'], 'POST');
    assert.equal(post.attributes['http.response.status_code'], 200);
    assert.equal(post.attributes['url.full'], `${emulator.url}/api/json.php`);
    assert.equal(post.attributes['server.address'], '127.0.0.1');
    assert.ok(post.start >= commandSpan.start && post.end <= commandSpan.end, 'inside its command');
    assert.deepEqual(
      inTrace.map((span) => span.name).sort(),
      ['POST', 'ferry.command sms'],
      'nothing else in the trace',
    );
  }
  // The commands without a valid traceparent start traces of their own, each with its POST.
  const ownTraces = commandSpans.filter((span) => !parents.some((p) => p.traceId === span.traceId));
  assert.equal(ownTraces.length, 2);
  assert.equal(new Set(ownTraces.map((span) => span.traceId)).size, 2);
  for (const own of ownTraces) {
    assert.equal(own.parentSpanId, '');
    assert.notEqual(own.traceId, '0'.repeat(32));
    assert.ok(spans.some((s) => s.name === 'POST' && s.parentSpanId === own.spanId));
  }

  // One request serves a whole envelope: each command's copy of it has the same envelope
  // id and the same timing, and there are as many copies as operations in the envelope.
  const byEnvelope = Map.groupBy(
    spans.filter((s) => s.name === 'POST'),
    (s) => String(s.attributes['ferry.envelope.id']),
  );
  let carried = 0;
  for (const [envelope, copies] of byEnvelope) {
    const first = copies[0] as Span;
    assert.equal(copies.length, first.attributes['ferry.envelope.operations'], envelope);
    assert.ok(
      copies.every((c) => c.start === first.start && c.end === first.end),
      envelope,
    );
    assert.equal(new Set(copies.map((c) => c.traceId)).size, copies.length, 'one per trace');
    carried += copies.length;
  }
  assert.equal(carried, 5);

  // No API key and no phone number in anything exported.
  const exported = receiver.bodies.join('\n');
  assert.equal(exported.includes(TEST_API_KEY), false);
  assert.equal(exported.includes(String(FIXTURE_PHONE)), false);
});

test('an OTLP protocol ferry does not ship stops it at start with one line naming the variable', async (t) => {
  const ferry = spawnFerry(t, {
    FERRY_SYNC_BASE_URL: 'http://127.0.0.1:1',
    FERRY_API_KEY: TEST_API_KEY,
    FERRY_ADMIN_LOOPBACK_ONLY: 'true',
    OTEL_TRACES_EXPORTER: 'otlp',
    OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc',
  });
  assert.equal(await ferry.exited(), 1);
  assert.equal(
    ferry.output().trim(),
    'ferry: configuration error: OTEL_EXPORTER_OTLP_PROTOCOL: must be http/json (the only one ferry ships), got "grpc"',
  );
});
