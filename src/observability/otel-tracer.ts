/**
 * The OpenTelemetry side of tracing.ts: imported only when tracing is on. A tracer
 * provider of its own (nothing registered globally), a batch span processor and the
 * OTLP/HTTP JSON exporter. Parents are passed explicitly, so no context manager runs.
 *
 * Span attributes carry bounded facts only (operation type, transport, partition, offset,
 * stage, HTTP status, endpoint URL): never a command's fields, an error text or the key,
 * which may hold phone numbers or secrets.
 */
import { randomBytes } from 'node:crypto';
import {
  type Attributes,
  type Context,
  defaultTextMapGetter,
  type Tracer as OtelTracer,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  defaultResource,
  detectResources,
  envDetector,
  resourceFromAttributes,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import type { Logger } from './logger.ts';
import type {
  CommandSpan,
  CommandSpanEnd,
  CommandSpanStart,
  HttpCall,
  HttpCallEnd,
  HttpCallStart,
  Tracer,
  Tracing,
  TracingSettings,
} from './tracing.ts';

/** The instrumentation scope of ferry's spans. */
export const TRACER_NAME = 'ferry';

const propagator = new W3CTraceContextPropagator();

/** A span of ferry's own, with the context its children start in. */
class OtelCommandSpan implements CommandSpan {
  readonly span: Span;
  readonly context: Context;
  #ended = false;

  constructor(span: Span, parent: Context) {
    this.span = span;
    this.context = trace.setSpan(parent, span);
  }

  committed(end: CommandSpanEnd): void {
    if (this.#ended) return;
    this.#ended = true;
    const attributes: Attributes = {
      'ferry.result.stage': end.stage,
      'ferry.result.success': end.success,
      'ferry.result.attempts': end.attempts,
    };
    if (end.reconciled) attributes['ferry.result.reconciled'] = true;
    if (end.delivery) attributes['ferry.result.delivery'] = end.delivery;
    this.span.setAttributes(attributes);
    // The stage says where it failed; the error text stays in the result record.
    if (!end.success) this.span.setStatus({ code: SpanStatusCode.ERROR, message: end.stage });
    this.span.end();
  }

  reread(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.span.setAttribute('ferry.command.reread', true);
    this.span.end();
  }
}

function samplerOf(settings: Extract<TracingSettings, { enabled: true }>): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(settings.samplerRatio);
  switch (settings.sampler) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return ratio();
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: ratio() });
  }
}

/** Wall-clock ms with sub-ms precision: the HTTP spans of one envelope share both ends. */
function preciseNowMs(): number {
  return performance.timeOrigin + performance.now();
}

function endpointAttributes(url: string): Attributes {
  try {
    const parsed = new URL(url);
    parsed.username = '';
    parsed.password = '';
    const port =
      parsed.port === '' ? (parsed.protocol === 'https:' ? 443 : 80) : Number(parsed.port);
    return { 'url.full': parsed.href, 'server.address': parsed.hostname, 'server.port': port };
  } catch {
    return {};
  }
}

class OtelTracerAdapter implements Tracer {
  readonly #tracer: OtelTracer;

  constructor(tracer: OtelTracer) {
    this.#tracer = tracer;
  }

  command(start: CommandSpanStart): CommandSpan {
    const carrier: Record<string, string> = {};
    if (start.traceparent !== undefined) carrier.traceparent = start.traceparent;
    if (start.tracestate !== undefined) carrier.tracestate = start.tracestate;
    // An invalid or absent traceparent leaves the root context: the command starts a trace.
    const parent =
      start.traceparent === undefined
        ? ROOT_CONTEXT
        : propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
    const span = this.#tracer.startSpan(
      `ferry.command ${start.type}`,
      {
        kind: SpanKind.CONSUMER,
        startTime: start.startMs,
        attributes: {
          'messaging.system': 'kafka',
          'messaging.operation.type': 'process',
          'messaging.destination.name': start.topic,
          'messaging.destination.partition.id': String(start.partition),
          'messaging.kafka.offset': Number(start.offset),
          'ferry.command.type': start.type,
          'ferry.transport': start.transport,
        },
      },
      parent,
    );
    return new OtelCommandSpan(span, parent);
  }

  http(parents: readonly (CommandSpan | undefined)[], start: HttpCallStart): HttpCall {
    const startTime = preciseNowMs();
    const attributes: Attributes = {
      'http.request.method': 'POST',
      ...endpointAttributes(start.url),
      'ferry.transport': start.transport,
      'ferry.envelope.kind': start.kind,
      'ferry.envelope.operations': start.operations,
      'ferry.envelope.attempt': start.attempt,
      // The same id in every command's copy of this request: it joins them in a search.
      'ferry.envelope.id': randomBytes(8).toString('hex'),
    };
    const spans: Span[] = [];
    for (const parent of parents) {
      if (!(parent instanceof OtelCommandSpan)) continue;
      spans.push(
        this.#tracer.startSpan(
          'POST',
          { kind: SpanKind.CLIENT, startTime, attributes },
          parent.context,
        ),
      );
    }
    return {
      end: (end: HttpCallEnd) => {
        const endTime = preciseNowMs();
        const failed = end.errorType !== undefined || (end.statusCode ?? 0) >= 400;
        for (const span of spans) {
          if (end.statusCode !== undefined) {
            span.setAttribute('http.response.status_code', end.statusCode);
          }
          if (failed) {
            span.setAttribute('error.type', end.errorType ?? String(end.statusCode));
            span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end(endTime);
        }
      },
    };
  }
}

/** Starts the SDK: a tracer provider exporting over OTLP/HTTP JSON in batches. */
export function startOtelTracing(
  settings: Extract<TracingSettings, { enabled: true }>,
  logger: Logger,
): Tracing {
  const log = logger.child({ component: 'tracing' });
  const resource = defaultResource()
    .merge(resourceFromAttributes({ 'service.name': 'ferry' }))
    .merge(detectResources({ detectors: [envDetector] }));
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(settings),
    spanProcessors: [
      new BatchSpanProcessor({
        exporter: new OTLPTraceExporter(),
        scheduledDelayMillis: settings.scheduleDelayMs,
        maxQueueSize: settings.maxQueueSize,
        maxExportBatchSize: settings.maxExportBatchSize,
      }),
    ],
  });
  log.info(
    { sampler: settings.sampler, scheduleDelayMs: settings.scheduleDelayMs },
    'tracing on: spans are exported over OTLP/HTTP (JSON)',
  );
  let stopping: Promise<void> | undefined;
  return {
    tracer: new OtelTracerAdapter(provider.getTracer(TRACER_NAME)),
    stop: () => {
      stopping ??= provider.shutdown().catch((error: unknown) => {
        log.warn(
          { err: error instanceof Error ? error.message : String(error) },
          'spans could not all be exported at shutdown',
        );
      });
      return stopping;
    },
  };
}
