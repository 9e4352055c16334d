import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import {
  BatchSpanProcessor,
  NodeTracerProvider,
  SimpleSpanProcessor,
  type Span,
  type SpanExporter,
  type SpanProcessor,
} from '@opentelemetry/sdk-trace-node';
import { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import type { IncomingMessage } from 'node:http';
import { SERVICE_VERSION } from '../common/service-version';
import { setTracingState } from './tracing';
import { scrubAttributes } from './tracing.scrub';

/**
 * The OpenTelemetry SDK, started only when tracing is on (tracing.register.ts; tests with an in-memory
 * exporter). Nothing else in src/ imports this file: features use tracing.ts (@opentelemetry/api only).
 */

/** Inbound requests not traced: probes and scrapes every few seconds would bury the requests in noise. */
const UNTRACED_PATHS = /^\/(health|metrics)(\/|\?|$)/;

/**
 * Runs last on every ending span, before any exporter sees it: attributes of the span, its events and
 * links go through scrubAttributes (no header values, query strings, bodies or bound SQL values).
 */
export class ScrubbingSpanProcessor implements SpanProcessor {
  onStart(): void {}

  onEnding(span: Span): void {
    replaceAll(span.attributes, scrubAttributes(span.attributes));
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
}

export interface StartedTracing {
  provider: NodeTracerProvider;
  /** Stops the instrumentations and flushes and shuts the provider down. */
  shutdown(): Promise<void>;
}

/**
 * Starts tracing in this process: a NodeTracerProvider registered globally (W3C trace-context propagation,
 * resource service.name/service.version overridable by OTEL_SERVICE_NAME / OTEL_RESOURCE_ATTRIBUTES,
 * sampler from OTEL_TRACES_SAMPLER), and the http and pg instrumentations. Must run before those modules
 * are loaded (`node --require`), or their calls are not traced.
 */
export function startTracing(options: StartTracingOptions = {}): StartedTracing {
  const exporter = options.exporter ?? new OTLPTraceExporter();
  const resource = resourceFromAttributes({
    [ATTR_SERVICE_NAME]: 'ticket-resale-bff',
    [ATTR_SERVICE_VERSION]: SERVICE_VERSION,
  }).merge(detectResources({ detectors: [envDetector] }));
  const provider = new NodeTracerProvider({
    resource,
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
