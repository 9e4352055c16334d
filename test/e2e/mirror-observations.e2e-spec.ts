import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ServedAccuracySampler } from '../../src/catalog-sync/served-accuracy.sampler';
import { StatusRecorder } from '../../src/status/status.recorder';
import type { StatusReport } from '../../src/status/status.report';
import { UpstreamClient } from '../../src/upstream/upstream.client';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  CHECKOUT_TEST_ENV,
  market,
  orderBody,
  postOrder,
  refreshMirror,
  waitFinal,
} from '../support/checkout-helpers';
import { cancelListingBatch, land, signAndSubmit, type SeededListing } from '../support/market';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Every observation counts (issue 30 items 4 and 5): what checkout's revalidation and the served-accuracy sampler
 * see live is applied to the mirror at once, with no sync pass; the sampler's verdicts reach /metrics.
 */
describe('Live observations update the mirror; the served-accuracy sampler (e2e)', () => {
  let t: TestApp;
  let orders: TestClient;
  let reader: Record<string, string>;
  let db: DataSource;

  beforeAll(async () => {
    // Strict read cache: an answer always reflects the last committed generation (no notification delay).
    // The sampler's own loop is off: the test draws its samples itself (sampleOnce), one at a time.
    t = await startTestApp({
      ...CHECKOUT_TEST_ENV,
      LISTINGS_CACHE_STRICT: 'true',
      RATE_LIMIT_CATALOG_READ: '100000',
      MIRROR_ACCURACY_SAMPLE_INTERVAL_MS: '0',
    });
    orders = await issueTestKey(t.app, ['orders:write']);
    reader = bearer((await issueTestKey(t.app, ['catalog:read'])).key);
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t?.close();
  });

  const passes = async (): Promise<number> =>
    Number((await db.query<{ n: string }[]>(`SELECT count(*) AS n FROM sync_passes`))[0]?.n);
  const read = (l: SeededListing) =>
    t.app.inject({ method: 'GET', url: `/v1/listings/${l.eventId}/${l.ticketId}`, headers: reader });
  const eventPage = (l: SeededListing) =>
    t.app.inject({ method: 'GET', url: `/v1/events/${l.eventId}/listings`, headers: reader });

  /** Cancels the listing upstream through the upstream client directly: no route of the service sees it. */
  async function cancelBehindTheMirror(l: SeededListing, n: string): Promise<void> {
    const client = t.app.get(UpstreamClient);
    const { signed } = await signAndSubmit(
      client,
      l.seller,
      cancelListingBatch(l.eventId, l.ticketId, l.seller),
      `cancel-${n}`,
    );
    const landed = await land(t.sandbox, client, signed);
    expect(landed.status).toBe('confirmed');
    expect(t.sandbox.admin.listing(l.eventId, l.ticketId)).toBeUndefined();
  }

  /** Relists the same ticket at another price, straight on the sandbox's ledger. */
  async function repriceBehindTheMirror(l: SeededListing, priceMinor: bigint, n: string): Promise<void> {
    await cancelBehindTheMirror(l, n);
    t.sandbox.admin.seedListing({
      eventId: l.eventId,
      ticketId: l.ticketId,
      seller: { kind: 'user', subject: l.seller.subject },
      askPriceMinor: priceMinor,
    });
  }

  it('an order for a listing cancelled upstream is rejected LISTING_GONE and the read API drops it at once', async () => {
    const { listing, buyer } = market(t.sandbox, 'obs-gone');
    await refreshMirror(t.app, listing.eventId);
    expect((await read(listing)).statusCode).toBe(200);
    await cancelBehindTheMirror(listing, 'obs-gone');
    // The mirror still serves it: nothing told it.
    expect((await read(listing)).statusCode).toBe(200);
    const passesBefore = await passes();

    const posted = await postOrder(t.app, orders.key, 'obs-gone', orderBody(listing, buyer));
    expect(posted.status).toBe(202);
    const done = await waitFinal(t.app, orders.key, posted.body.id);
    expect(done).toMatchObject({ state: 'rejected', failure: { code: 'LISTING_GONE' } });

    // Right after the rejection, with no sync pass run: gone from the read API.
    expect((await read(listing)).statusCode).toBe(410);
    // (A one-event page would 404 here: this suite runs no events pass, so the event itself is not mirrored.)
    expect(await passes()).toBe(passesBefore);
  });

  it('an order at the old price of a listing repriced upstream is rejected PRICE_CHANGED; the read API shows the new price', async () => {
    const { listing, buyer } = market(t.sandbox, 'obs-price', 2_500_000n);
    await refreshMirror(t.app, listing.eventId);
    await repriceBehindTheMirror(listing, 2_750_000n, 'obs-price');
    expect((await read(listing)).json<{ price: { minor: string } }>().price.minor).toBe('2500000');
    const passesBefore = await passes();

    const posted = await postOrder(t.app, orders.key, 'obs-price', orderBody(listing, buyer));
    const done = await waitFinal(t.app, orders.key, posted.body.id);
    expect(done).toMatchObject({ state: 'rejected', failure: { code: 'PRICE_CHANGED' } });

    const res = await read(listing);
    expect(res.statusCode).toBe(200);
    expect(res.json<{ price: { minor: string } }>().price.minor).toBe('2750000');
    expect(await passes()).toBe(passesBefore);
  });

  it('the sampler counts a served listing removed upstream stale and the mirror drops it; an unchanged one buyable', async () => {
    const sampler = t.app.get(ServedAccuracySampler);
    const kept = market(t.sandbox, 'sample-kept').listing;
    const removed = market(t.sandbox, 'sample-removed').listing;
    await refreshMirror(t.app, kept.eventId);
    await refreshMirror(t.app, removed.eventId);
    // What the earlier tests served is drawn (and applied) first, so the counts below are these two listings'.
    for (let i = 0; i < 50 && (await sampler.sampleOnce()) !== null; i++);
    const before = sampler.view();

    // Served (each through its event's listing page), then the second one is cancelled upstream.
    expect((await eventPage(kept)).json<{ items: unknown[] }>().items).toHaveLength(1);
    expect((await eventPage(removed)).json<{ items: unknown[] }>().items).toHaveLength(1);
    await cancelBehindTheMirror(removed, 'sample-removed');

    const verdicts = new Map<string, string>();
    for (let i = 0; i < 10; i++) {
      const outcome = await sampler.sampleOnce();
      if (outcome === null) break;
      if ('verdict' in outcome) verdicts.set(outcome.listing.eventId, outcome.verdict);
    }
    expect(verdicts.size).toBe(2);
    expect(verdicts.get(kept.eventId.toString())).toBe('buyable');
    expect(verdicts.get(removed.eventId.toString())).toBe('gone');
    expect(sampler.view()).toMatchObject({ sampled: before.sampled + 2, stale: before.stale + 1 });

    // The sample was an observation: the removed listing left the mirror with no pass.
    expect((await read(removed)).statusCode).toBe(410);
    expect((await read(kept)).statusCode).toBe(200);

    const metrics = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    expect(metrics).toMatch(/^mirror_served_accuracy \d/m);
    expect(metrics).toMatch(/^mirror_served_sampled_total [1-9]/m);
    expect(metrics).toMatch(/^mirror_served_stale_total\{reason="gone"\} [1-9]/m);
    expect(metrics).toMatch(/^mirror_observations_total\{source="checkout",result="changed"\} [1-9]/m);
    expect(metrics).toMatch(/^mirror_observations_total\{source="sampler",result="changed"\} [1-9]/m);
  });

  it('the status report carries the samples (GET /v1/admin/status catalog_accuracy), from the recorded minutes', async () => {
    const sampler = t.app.get(ServedAccuracySampler);
    const mine = sampler.view();
    expect(mine.sampled).toBeGreaterThanOrEqual(2);
    // One recorder tick writes this replica's counts to the current minute (as every STATUS_RECORD_INTERVAL_MS).
    await t.app.get(StatusRecorder).tick();
    // The report is reused for 2 s: a new one is built by then (bounded wait).
    const admin = bearer((await issueTestKey(t.app, ['admin'])).key);
    let report: StatusReport | undefined;
    for (let i = 0; i < 30; i++) {
      const res = await t.app.inject({ method: 'GET', url: '/v1/admin/status', headers: admin });
      expect(res.statusCode).toBe(200);
      report = res.json<StatusReport>();
      if (report.catalog_accuracy.sampled_window >= mine.sampled) break;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const sut = report?.catalog_accuracy;
    expect(sut).toMatchObject({
      sampling: false,
      sample_interval_ms: 0,
      sampled_window: mine.sampled,
      stale_window: mine.stale,
      window_samples: mine.window,
    });
    expect(sut?.accuracy_window).toBeCloseTo((mine.sampled - mine.stale) / mine.sampled, 2);
    const points = sut?.accuracy_per_minute[0]?.points.filter((p) => p.value !== null) ?? [];
    expect(points.length).toBeGreaterThanOrEqual(1);
    expect(points.every((p) => (p.value ?? -1) >= 0 && (p.value ?? 101) <= 100)).toBe(true);
  });
});
