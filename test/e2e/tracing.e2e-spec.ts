import { randomBytes } from 'node:crypto';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace-base';
import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTracing, type StartedTracing } from '../../src/tracing/tracing.sdk';
import type { TestClient } from '../support/auth-helpers';
import type { TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

/**
 * Tracing in process with an in-memory exporter (docs/tracing.md). The SDK starts before the app's modules
 * are loaded (they are imported in beforeAll, not at the top), as `node --require` starts it before main.js:
 * http, pg and Nest are patched as they load.
 */
type Helpers = typeof import('../support/checkout-helpers');

const traceId = randomBytes(16).toString('hex');
const callerSpanId = randomBytes(8).toString('hex');
const canaries = {
  upstreamKey: `upstream-canary-${randomBytes(12).toString('hex')}`,
  idempotencyKey: `idem-canary-${randomBytes(12).toString('hex')}`,
  query: `query-canary-${randomBytes(12).toString('hex')}`,
  userAgent: `agent-canary-${randomBytes(12).toString('hex')}`,
  header: `header-canary-${randomBytes(12).toString('hex')}`,
};

function serialize(span: ReadableSpan): string {
  return JSON.stringify({
    name: span.name,
    attributes: span.attributes,
    events: span.events,
    links: span.links,
    status: span.status,
    resource: span.resource.attributes,
    scope: span.instrumentationScope,
  });
}

describe('Tracing: one trace from the caller through checkout to the upstream (e2e)', () => {
  const exporter = new InMemorySpanExporter();
  let tracing: StartedTracing;
  let helpers: Helpers;
  let t: TestApp;
  let client: TestClient;
  let baseUrl: string;
  let orderId: string;

  beforeAll(async () => {
    tracing = startTracing({ exporter, simple: true });
    const { startTestApp } = await import('../support/test-app.js');
    const { issueTestKey } = await import('../support/auth-helpers.js');
    helpers = await import('../support/checkout-helpers.js');
    t = await startTestApp(
      { ...helpers.CHECKOUT_TEST_ENV, UPSTREAM_API_KEY: canaries.upstreamKey },
      { sandbox: { landingDelayMs: 50 } },
    );
    client = await issueTestKey(t.app, ['orders:write', 'catalog:read']);
    await t.app.listen(0, '127.0.0.1');
    baseUrl = await t.app.getUrl();

    const { listing, buyer } = helpers.market(t.sandbox, 'traced');
    await helpers.refreshMirror(t.app, listing.eventId);
    // A real socket (fetch is not instrumented): the caller's traceparent, a key and headers to leak.
    const res = await fetch(`${baseUrl}/v1/orders`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${client.key}`,
        'content-type': 'application/json',
        'idempotency-key': canaries.idempotencyKey,
        traceparent: `00-${traceId}-${callerSpanId}-01`,
        'user-agent': canaries.userAgent,
        'x-canary': canaries.header,
      },
      body: JSON.stringify(helpers.orderBody(listing, buyer)),
    });
    if (res.status !== 202) throw new Error(`POST /v1/orders answered ${res.status}`);
    orderId = ((await res.json()) as { id: string }).id;
    const done = await helpers.waitFinal(t.app, client.key, orderId);
    if (done.state !== 'confirmed') throw new Error(`order ended ${done.state}`);
    await fetch(`${baseUrl}/v1/events?limit=2&q=${canaries.query}`, {
      headers: { authorization: `Bearer ${client.key}`, 'user-agent': canaries.userAgent },
    });
    // The drive's last steps end after the order reads final: wait for the confirming step's span.
    await waitUntil(
      () => exporter.getFinishedSpans().some((s) => s.attributes['order.next_state'] === 'confirmed'),
      10_000,
      50,
    );
  });
  afterAll(async () => {
    await t?.close();
    await tracing?.shutdown();
  });

  it('covers POST /v1/orders → sign → submit → confirmed in the caller trace, down to SQL and the upstream', () => {
    const spans = exporter.getFinishedSpans();
    const inTrace = spans.filter((s) => s.spanContext().traceId === traceId);

    const server = inTrace.find(
      (s) => s.kind === SpanKind.SERVER && s.parentSpanContext?.spanId === callerSpanId,
    );
    expect(server?.name).toBe('POST /v1/orders');
    expect(server?.attributes['http.route']).toBe('/v1/orders');

    // The drive and its steps (the POST starts the drive in its own context), every audit step an event.
    const orderSpans = spans.filter((s) => s.attributes['order.id'] === orderId);
    expect(orderSpans.map((s) => s.name)).toEqual(
      expect.arrayContaining(['checkout drive', 'checkout revalidate', 'checkout track']),
    );
    expect(orderSpans.every((s) => s.spanContext().traceId === traceId)).toBe(true);
    const steps = orderSpans.flatMap((s) =>
      s.events.filter((e) => e.name === 'order.step').map((e) => e.attributes?.step),
    );
    expect(steps).toEqual(
      expect.arrayContaining(['revalidated', 'signing', 'signed', 'submitted', 'confirmed']),
    );
    expect(orderSpans.some((s) => s.attributes['order.next_state'] === 'confirmed')).toBe(true);

    // Upstream calls: one span per call with its attempts as events, each under a checkout step.
    const upstream = inTrace.filter((s) => s.name.startsWith('upstream '));
    expect(upstream.map((s) => s.attributes['upstream.operation'])).toEqual(
      expect.arrayContaining(['signUserTransaction', 'submitTransaction']),
    );
    expect(upstream.every((s) => s.events.some((e) => e.name === 'upstream.attempt'))).toBe(true);

    // The upstream received a traceparent of this trace: its own (in-process, instrumented) server span is
    // the child of our client span.
    const clientSpans = new Set(
      inTrace.filter((s) => s.kind === SpanKind.CLIENT).map((s) => s.spanContext().spanId),
    );
    const upstreamServer = inTrace.filter(
      (s) => s.kind === SpanKind.SERVER && clientSpans.has(s.parentSpanContext?.spanId ?? ''),
    );
    expect(upstreamServer.length).toBeGreaterThan(0);

    // The confirmed order's event refresh (a sync pass) in the same trace.
    expect(inTrace.some((s) => s.name === 'sync pass' && s.attributes['sync.trigger'] === 'refresh')).toBe(
      true,
    );

    // SQL of the hot path.
    expect(
      inTrace.some(
        (s) => s.attributes['db.system.name'] === 'postgresql' || s.attributes['db.system'] === 'postgresql',
      ),
    ).toBe(true);
  });

  it('puts trace_id on every log line of the request and of its checkout steps', () => {
    const records = t.logs.records();
    const steps = records.filter((r) => r.msg === 'checkout step' && r.orderId === orderId);
    expect(steps.length).toBeGreaterThan(0);
    expect(steps.every((r) => r.trace_id === traceId && typeof r.span_id === 'string')).toBe(true);
    const post = records.find((r) => r.msg === 'request completed' && r.route === '/v1/orders');
    expect(post?.trace_id).toBe(traceId);
  });

  it("a drive resumed by the worker is a trace of its own, linked to the POST's span", async () => {
    const { listing, buyer } = helpers.market(t.sandbox, 'resumed');
    await helpers.refreshMirror(t.app, listing.eventId);
    // Every attempt of the first drive's signing call fails: the order is handed back, the worker resumes it.
    t.sandbox.admin.setFaults([{ operation: 'signUser', times: 4, kind: 'error', status: 503 }]);
    const resumedTrace = randomBytes(16).toString('hex');
    const postSpan = randomBytes(8).toString('hex');
    let id = '';
    try {
      const res = await fetch(`${baseUrl}/v1/orders`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${client.key}`,
          'content-type': 'application/json',
          'idempotency-key': `resumed-${randomBytes(6).toString('hex')}`,
          traceparent: `00-${resumedTrace}-${postSpan}-01`,
        },
        body: JSON.stringify(helpers.orderBody(listing, buyer)),
      });
      expect(res.status).toBe(202);
      id = ((await res.json()) as { id: string }).id;
      expect((await helpers.waitFinal(t.app, client.key, id)).state).toBe('confirmed');
    } finally {
      t.sandbox.admin.clearFaults();
    }
    await waitUntil(
      () =>
        exporter
          .getFinishedSpans()
          .some((s) => s.attributes['order.id'] === id && s.attributes['order.next_state'] === 'confirmed'),
      10_000,
      50,
    );
    const drives = exporter
      .getFinishedSpans()
      .filter((s) => s.name === 'checkout drive' && s.attributes['order.id'] === id);
    const server = exporter
      .getFinishedSpans()
      .find((s) => s.kind === SpanKind.SERVER && s.parentSpanContext?.spanId === postSpan);
    expect(server).toBeDefined();
    const [first, ...resumed] = drives.toSorted(
      (a, b) => a.startTime[0] - b.startTime[0] || a.startTime[1] - b.startTime[1],
    );
    expect(first.spanContext().traceId).toBe(resumedTrace);
    expect(resumed.length).toBeGreaterThan(0);
    for (const drive of resumed) {
      expect(drive.spanContext().traceId).not.toBe(resumedTrace);
      expect(drive.parentSpanContext).toBeUndefined();
      expect(drive.links.map((l) => [l.context.traceId, l.context.spanId])).toEqual([
        [resumedTrace, server?.spanContext().spanId],
      ]);
    }
  });

  it('exports no header value, key, idempotency key, query string, body or signed bytes', async () => {
    const db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
    let derived: string[];
    try {
      const { rows } = await db.query<{ key: string; signed: string | null }>(
        `SELECT upstream_idempotency_key AS key, signed_transaction AS signed FROM ledger_transactions`,
      );
      derived = rows.flatMap((r) => [r.key, ...(r.signed ? [r.signed] : [])]);
    } finally {
      await db.end();
    }
    expect(derived.length).toBeGreaterThan(1);
    const exported = exporter.getFinishedSpans().map(serialize).join('\n');
    expect(exported).toContain(orderId);
    for (const secret of [...Object.values(canaries), client.key, ...derived]) {
      expect(exported).not.toContain(secret);
    }
  });
});
