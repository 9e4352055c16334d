import { randomBytes } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type StartedTracing } from '../../src/tracing/tracing.sdk';
import type { TestClient } from '../support/auth-helpers';
import type { TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';
import type { WebhookReceiver } from '../support/webhook-receiver';

/**
 * Issue 31 item 7, with the in-memory exporter (the SDK starts before the app's modules load, as in
 * tracing.e2e-spec.ts): no concrete path in any exported span (webhook receivers' paths hold their tokens, API
 * paths hold subjects and ids), no caller's traceparent sent to a webhook receiver, and the sampling decision is
 * the service's, not the inbound `sampled` flag's.
 */
const receiverToken = `hooktoken${randomBytes(12).toString('hex')}`;
const hex = (bytes: number): string => randomBytes(bytes).toString('hex');
const HTTP_SCOPE = '@opentelemetry/instrumentation-http';

function serialize(span: ReadableSpan): string {
  return JSON.stringify({
    name: span.name,
    attributes: span.attributes,
    events: span.events,
    links: span.links,
  });
}

describe('Tracing hygiene: templated routes, origin-only client spans, webhooks outside the trace (e2e)', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: StartedTracing;
  let t: TestApp;
  let client: TestClient;
  let baseUrl: string;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    tracing = startTracing({ exporter, simple: true });
    const { startTestApp } = await import('../support/test-app.js');
    const { issueTestKey } = await import('../support/auth-helpers.js');
    const { WebhookReceiver: Receiver } = await import('../support/webhook-receiver.js');
    const helpers = await import('../support/checkout-helpers.js');
    t = await startTestApp({
      ...helpers.CHECKOUT_TEST_ENV,
      WEBHOOKS_WORKER_INTERVAL_MS: '100',
      WEBHOOKS_DELIVERY_TIMEOUT_MS: '2000',
      RATE_LIMIT_DEFAULT: '100000',
    });
    client = await issueTestKey(t.app, ['webhooks:write', 'orders:write', 'catalog:read']);
    receiver = await Receiver.start();
    await t.app.listen(0, '127.0.0.1');
    baseUrl = await t.app.getUrl();
    // Upstream calls (a sync pass of one event) for the client spans.
    const { listing } = helpers.market(t.sandbox, 'hygiene');
    await helpers.refreshMirror(t.app, listing.eventId);
  }, 120_000);

  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await tracing?.shutdown();
  });

  const call = (method: string, path: string, traceparent: string, body?: unknown): Promise<Response> =>
    fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${client.key}`,
        traceparent,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });

  it("a ping runs outside the caller's trace: no traceparent reaches the receiver, its path is in no span", async () => {
    const traceId = hex(16);
    const created = await call('POST', '/v1/webhooks/endpoints', `00-${hex(16)}-${hex(8)}-01`, {
      url: `${receiver.url}/hooks/${receiverToken}?token=${receiverToken}`,
      event_types: ['order.confirmed'],
    });
    expect(created.status).toBe(201);
    const { id } = (await created.json()) as { id: string };
    const pinged = await call('POST', `/v1/webhooks/endpoints/${id}/ping`, `00-${traceId}-${hex(8)}-01`);
    expect(pinged.status).toBe(202);
    const { event_id: eventId } = (await pinged.json()) as { event_id: string };
    await waitUntil(() => receiver.received.some((r) => r.id === eventId), 10_000, 50);
    const arrived = receiver.received.find((r) => r.id === eventId);
    expect(arrived?.headers.traceparent).toBeUndefined();
    expect(arrived?.headers.tracestate).toBeUndefined();

    // The ping request itself was traced (templated), and nothing exported names the receiver's path.
    await waitUntil(
      () => exporter.getFinishedSpans().some((s) => s.spanContext().traceId === traceId),
      5_000,
      50,
    );
    const spans = exporter.getFinishedSpans();
    const server = spans.find((s) => s.spanContext().traceId === traceId && s.kind === SpanKind.SERVER);
    expect(server?.name).toBe('POST /v1/webhooks/endpoints/:id/ping');
    expect(spans.filter((s) => serialize(s).includes(receiverToken)).map((s) => s.name)).toEqual([]);
  });

  it('incoming request spans carry the templated route, never the concrete path', async () => {
    const orderId = '0b0c0d0e-0000-4000-8000-000000000001';
    const traceId = hex(16);
    await (await call('GET', `/v1/orders/${orderId}`, `00-${traceId}-${hex(8)}-01`)).arrayBuffer();
    await waitUntil(
      () =>
        exporter
          .getFinishedSpans()
          .some((s) => s.spanContext().traceId === traceId && s.kind === SpanKind.SERVER),
      5_000,
      50,
    );
    const server = exporter
      .getFinishedSpans()
      .find((s) => s.spanContext().traceId === traceId && s.kind === SpanKind.SERVER);
    expect(server?.name).toBe('GET /v1/orders/:id');
    const attributes = server?.attributes ?? {};
    const paths = ['url.path', 'http.target'].map((key) => attributes[key]).filter((v) => v !== undefined);
    expect(paths.length).toBeGreaterThan(0);
    expect(new Set(paths)).toEqual(new Set(['/v1/orders/:id']));
    expect(serialize(server as ReadableSpan)).not.toContain(orderId);
  });

  it('outgoing HTTP client spans keep only the origin (no path, no query)', () => {
    const clients = exporter
      .getFinishedSpans()
      .filter((s) => s.kind === SpanKind.CLIENT && s.instrumentationScope.name === HTTP_SCOPE);
    expect(clients.length).toBeGreaterThan(0);
    const withPath = clients.filter(
      (s) => s.attributes['url.path'] !== undefined || s.attributes['http.target'] !== undefined,
    );
    expect(withPath.map((s) => s.name)).toEqual([]);
    const urls = clients.flatMap((s) =>
      ['url.full', 'http.url'].map((key) => s.attributes[key]).filter((v) => v !== undefined),
    );
    expect(urls.length).toBeGreaterThan(0);
    expect(urls.map(String).filter((url) => !/^https?:\/\/[^/]+$/.test(url))).toEqual([]);
  });

  it("the sampling decision is the service's: an inbound traceparent marked not sampled is still traced", async () => {
    const traceId = hex(16);
    const parent = hex(8);
    await (await call('GET', '/v1/me', `00-${traceId}-${parent}-00`)).arrayBuffer();
    await waitUntil(
      () =>
        exporter
          .getFinishedSpans()
          .some((s) => s.spanContext().traceId === traceId && s.kind === SpanKind.SERVER),
      5_000,
      50,
    );
    const server = exporter
      .getFinishedSpans()
      .find((s) => s.spanContext().traceId === traceId && s.kind === SpanKind.SERVER);
    // The caller's trace stays the parent.
    expect(server?.parentSpanContext?.spanId).toBe(parent);
  });
});
