import { SpanKind } from '@opentelemetry/api';
import { getNumberFromEnv, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  type Sampler,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { IncomingMessage, RequestOptions } from 'node:http';
import { SERVICE_VERSION } from '../common/service-version';
import { setTracingState } from './tracing';
import { scrubAttributes, templateHttpPaths } from './tracing.scrub';

/**
 * The OpenTelemetry SDK, started only when tracing is on (tracing.register.ts; tests with an in-memory
 * exporter). Nothing else in src/ imports this file: features use tracing.ts (@opentelemetry/api only).
 */

/** Inbound requests not traced: probes and scrapes every few seconds would bury the requests in noise. */
const UNTRACED_PATHS = /^\/(health|metrics)(\/|\?|$)/;

/** The instrumentation whose spans carry request paths (templateHttpPaths). */
const HTTP_SCOPE = '@opentelemetry/instrumentation-http';

/**
 * A webhook send (a delivery, a retry, a ping: every one carries the Standard Webhooks `webhook-id` header) is not
 * traced: no client span, and no `traceparent` is injected, so a receiver never learns the trace of the request
 * that caused the send (issue 31 item 7). Its outcome is in the delivery log.
 */
export function isWebhookSend(options: Pick<RequestOptions, 'headers'>): boolean {
  const { headers } = options;
  if (headers === undefined || Array.isArray(headers)) return false;
  return Object.keys(headers).some((name) => name.toLowerCase() === 'webhook-id');
}

/**
 * The service decides what is sampled: a new trace, or one continued from a caller's `traceparent` (the caller's
 * trace id stays the parent), is kept with probability `ratio` whatever the inbound `sampled` flag says, so a
 * caller can neither force every request into the exporter nor hide one from it; spans under a local parent
 * follow it (one decision per trace in this process).
 */
export function serviceSampler(ratio: number): Sampler {
  const own = new TraceIdRatioBasedSampler(ratio);
  return new ParentBasedSampler({ root: own, remoteParentSampled: own, remoteParentNotSampled: own });
}

/**
 * Runs last on every ending span, before any exporter sees it: attributes of the span, its events and
 * links go through scrubAttributes (no header values, query strings, bodies or bound SQL values).
 */
export class ScrubbingSpanProcessor implements SpanProcessor {
  onStart(): void {}

  onEnding(span: Span): void {
    const http =
      span.instrumentationScope.name === HTTP_SCOPE &&
      (span.kind === SpanKind.SERVER || span.kind === SpanKind.CLIENT);
    const attributes = http
      ? templateHttpPaths(span.kind === SpanKind.SERVER ? 'server' : 'client', span.attributes)
      : span.attributes;
    replaceAll(span.attributes, scrubAttributes(attributes));
    for (const event of span.events) {
      if (event.attributes) replaceAll(event.attributes, scrubAttributes(event.attributes));
    }
    for (const link of span.links) {
      if (link.attributes) replaceAll(link.attributes, scrubAttributes(link.attributes));
    }
  }

  onEnd(): void {}

  forceFlush(): Promise<void> {
    return Promise.resolve();
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}

/** The span is still open in onEnding, but the SDK hands out its attribute maps as read-only. */
function replaceAll(target: object, source: object): void {
  const map = target as Record<string, unknown>;
  for (const key of Object.keys(map)) delete map[key];
  Object.assign(map, source);
}

export interface StartTracingOptions {
  /** Default: OTLP over HTTP, configured by the standard OTEL_EXPORTER_OTLP_* variables. */
  exporter?: SpanExporter;
  /** Export each span as it ends (tests) instead of in batches (OTEL_BSP_* variables). */
  simple?: boolean;
  /** Share of traces kept (serviceSampler); default OTEL_TRACES_SAMPLER_ARG, else 1. */
  sampleRatio?: number;
}

export interface StartedTracing {
  provider: NodeTracerProvider;
  /** Stops the instrumentations and flushes and shuts the provider down. */
  shutdown(): Promise<void>;
}

/**
 * Starts tracing in this process: a NodeTracerProvider registered globally (W3C trace-context propagation,
 * resource service.name/service.version overridable by OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES,
 * the service's own sampler (serviceSampler: ratio OTEL_TRACES_SAMPLER_ARG; OTEL_TRACES_SAMPLER is not used)),
 * and the http and pg instrumentations. Must run before those modules are loaded (`node --require`), or their
 * calls are not traced.
 */
export function startTracing(options: StartTracingOptions = {}): StartedTracing {
  const exporter = options.exporter ?? new OTLPTraceExporter();
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: 'ticket-resale-bff',
    [ATTR_SERVICE_VERSION]: SERVICE_VERSION,
  }).merge(detectResources({ detectors: [envDetector] }));
  const ratio = options.sampleRatio ?? getNumberFromEnv('OTEL_TRACES_SAMPLER_ARG') ?? 1;
  const provider = new NodeTracerProvider({
    resource,
    sampler: serviceSampler(Math.min(1, Math.max(0, Number.isFinite(ratio) ? ratio : 1))),
    spanProcessors: [
      new ScrubbingSpanProcessor(),
      options.simple ? new SimpleSpanProcessor(exporter) : new BatchSpanProcessor(exporter),
    ],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  const unregister = registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request: IncomingMessage) => UNTRACED_PATHS.test(request.url ?? ''),
        ignoreOutgoingRequestHook: isWebhookSend,
        // No header is ever copied to a span; the exporter's own requests are not traced.
        headersToSpanAttributes: {},
        requireParentforOutgoingSpans: true,
      }),
      // Only statements inside a traced request, checkout step or sync pass: the durable-work loops poll
      // the database every few hundred ms and would flood the exporter with root spans.
      new PgInstrumentation({ requireParentSpan: true, ignoreConnectSpans: true }),
      // Not instrumentation-nestjs-core: 0.70 (the pinned line) patches @nestjs/core >=4 <12 only, and
      // Nest 12 is ESM, which require hooks cannot patch; it recorded nothing here (docs/tracing.md). The request
      // span is named after the Nest route instead (nameRequestSpan).
    ],
  });
  setTracingState({ flush: () => provider.forceFlush() });
  return {
    provider,
    async shutdown() {
      unregister();
      setTracingState(undefined);
      await provider.shutdown();
    },
  };
}
