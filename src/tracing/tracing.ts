import {
  ROOT_CONTEXT,
  SpanStatusCode,
  context,
  isSpanContextValid,
  propagation,
  trace,
  type Attributes,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { raceTimeout, TIMED_OUT } from '../common/race-timeout';

/**
 * Tracing as the rest of the code sees it: @opentelemetry/api only (docs/tracing.md). The SDK is started by
 * tracing.register.ts (loaded with `node --require` before Nest) only when OTEL_EXPORTER_OTLP_ENDPOINT is set;
 * it leaves its state on the process here. When it is not set every helper below is a plain call: no span
 * object, no context switch, no log field.
 */
const STATE = Symbol.for('ticket-resale-bff.tracing');

/** What the started SDK leaves on the process: how to flush it before exit. */
export interface TracingState {
  flush(): Promise<void>;
}

type WithState = typeof globalThis & { [STATE]?: TracingState };

export function setTracingState(state: TracingState | undefined): void {
  (globalThis as WithState)[STATE] = state;
}

/** True once the SDK was started in this process (tracing.register.ts or a test). */
export function tracingOn(): boolean {
  return (globalThis as WithState)[STATE] !== undefined;
}

/** Exports the spans still buffered (unbounded: shutdown calls `flushTracingWithin`). */
export async function flushTracing(): Promise<void> {
  await (globalThis as WithState)[STATE]?.flush();
}

/** The longest a shutdown waits for the last spans' export (the OTLP exporter's own timeout is 10 s). */
export const FLUSH_MAX_MS = 2_000;
/** Left of the shutdown's budget after the flush, for the exit itself (the last log lines). */
export const FLUSH_MARGIN_MS = 200;

/** What came of a bounded flush: nothing to flush (tracing off), exported, refused, or given up waiting. */
export type FlushOutcome = 'off' | 'flushed' | 'failed' | 'gave_up';

/**
 * `flushTracing()` bounded by what is left of the shutdown (`remainingMs` of SHUTDOWN_TIMEOUT_MS): it waits at
 * most min(FLUSH_MAX_MS, remainingMs − FLUSH_MARGIN_MS), so a collector out of reach (the exporter waits up to
 * `OTEL_EXPORTER_OTLP_TIMEOUT`, 10 s) costs the spans still queued, never a forced exit 1. A flush that gave up
 * or failed is a warning through `warn` (no error text: an exporter's error may name the collector's URL).
 */
export async function flushTracingWithin(
  remainingMs: number,
  warn: (fields: Record<string, unknown>, message: string) => void,
): Promise<FlushOutcome> {
  if (!tracingOn()) return 'off';
  const waitMs = Math.max(0, Math.min(FLUSH_MAX_MS, remainingMs - FLUSH_MARGIN_MS));
  const flushed = flushTracing().then(
    () => 'flushed' as const,
    () => 'failed' as const,
  );
  const outcome = await raceTimeout(flushed, waitMs);
  if (outcome === TIMED_OUT) {
    warn({ waitedMs: waitMs }, 'tracing flush gave up at shutdown: the spans still queued are lost');
    return 'gave_up';
  }
  if (outcome === 'failed') warn({}, 'tracing flush failed at shutdown: the spans still queued are lost');
  return outcome;
}

const tracer = trace.getTracer('ticket-resale-bff');

export interface SpanOptions {
  /**
   * The traceparent of the work this continues (an order's POST): when no span is active (a drive resumed by
   * the recovery worker), the new span starts a new trace with a link to it.
   */
  linkTo?: string | null;
}

function linksTo(traceparent: string): Link[] {
  const linked = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, { traceparent }));
  return linked && isSpanContextValid(linked) ? [{ context: linked }] : [];
}

/** True when tracing is on and no span is active: new spans would start a trace of their own. */
export function outsideTrace(): boolean {
  return tracingOn() && trace.getActiveSpan() === undefined;
}

/** The W3C traceparent of the active span, to store with work resumed later (undefined when tracing is off). */
export function currentTraceparent(): string | undefined {
  if (!tracingOn()) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/**
 * Runs `fn` inside a new span `name` (a child of the active one) and ends it when `fn` settles: status
 * ERROR with the error's code (never its message) when it throws. `attributes`: ids and outcomes only,
 * never a header value, key, body or URL with a query (docs/tracing.md). Tracing off: `fn(undefined)`.
 */
export function withSpan<T>(
  name: string,
  attributes: Attributes,
  fn: (span: Span | undefined) => Promise<T>,
  options: SpanOptions = {},
): Promise<T> {
  if (!tracingOn()) return fn(undefined);
  const links = options.linkTo && !trace.getActiveSpan() ? linksTo(options.linkTo) : undefined;
  return tracer.startActiveSpan(name, { attributes, links }, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      span.setStatus({ code: SpanStatusCode.ERROR, message: errorCode(error) });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** A stable error code for a span's status: the error's `code` when it is a short token, else its class. */
function errorCode(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && /^[A-Z0-9_]{1,40}$/.test(code)) return code;
  return error instanceof Error ? error.name : 'error';
}

/** `trace_id` and `span_id` of the active span, for a log line (empty when tracing is off or no span). */
export function traceLogFields(): { trace_id?: string; span_id?: string } {
  const span = trace.getActiveSpan();
  if (span === undefined) return {};
  const { traceId, spanId } = span.spanContext();
  return { trace_id: traceId, span_id: spanId };
}

/**
 * Names the inbound request's span after its route (`POST /v1/orders/:id`, never the concrete path): the
 * http instrumentation knows only the method. Called from the first onRequest hook, where the active span
 * is the request's own. Takes the request itself: Fastify builds `routeOptions` anew on every read, which
 * only happens here when tracing is on.
 */
export function nameRequestSpan(request: { method: string; routeOptions?: { url?: string } }): void {
  if (!tracingOn()) return;
  const span = trace.getActiveSpan();
  if (span === undefined) return;
  const route = request.routeOptions?.url ?? 'unmatched';
  span.updateName(`${request.method} ${route}`);
  span.setAttribute('http.route', route);
}

/** An event on the active span (ids and outcomes only, like span attributes); nothing when tracing is off. */
export function addSpanEvent(name: string, attributes: Attributes): void {
  if (!tracingOn()) return;
  trace.getActiveSpan()?.addEvent(name, attributes);
}
