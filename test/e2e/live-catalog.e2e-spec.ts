import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogSyncService } from '../../src/catalog-sync/catalog-sync.service';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { withPg } from '../support/catalog-mirror';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

interface Page {
  items: { event_id: string; ticket_id: string }[];
  data_as_of: string | null;
  stale: boolean;
}

describe('live catalog: hot events walked on demand, per-event data_as_of, fresh=true pages', () => {
  let t: TestApp;
  let reader: TestClient;
  let sync: CatalogSyncService;
  let fullPassStart: string;
  let eventIds: string[];

  beforeAll(async () => {
    t = await startTestApp(
      {
        SYNC_ENABLED: 'true',
        SYNC_ON_STARTUP: 'true',
        // Full passes only at startup here: every later refresh of an event is a hot or fresh walk.
        SYNC_EVENTS_INTERVAL_MS: '3600000',
        SYNC_LISTINGS_INTERVAL_MS: '3600000',
        SYNC_HOT_TARGET_MS: '1000',
        SYNC_HOT_STARTS_WITHIN_MS: '0',
        SYNC_HOT_DEMAND_HALF_LIFE_MS: '5000',
        LISTINGS_FRESH_TIMEOUT_MS: '3000',
      },
      { sandbox: { events: 12, listings: 240 } },
    );
    reader = await issueTestKey(t.app, ['catalog:read']);
    sync = t.app.get(CatalogSyncService);
    await waitUntil(async () => (await sync.lastCompletedPass('listings')) !== null, 30_000);
    const pass = await withPg(t.databaseUrl, (c) =>
      c.query<{ started_at: Date }>(
        `SELECT started_at FROM sync_passes WHERE resource = 'listings' AND status = 'completed'`,
      ),
    );
    fullPassStart = pass.rows[0].started_at.toISOString();
    const events = await withPg(t.databaseUrl, (c) =>
      c.query<{ id: string }>(
        `SELECT DISTINCT event_id::text AS id FROM listings WHERE removed_at IS NULL ORDER BY 1 LIMIT 3`,
      ),
    );
    eventIds = events.rows.map((r) => r.id);
    if (eventIds.length !== 3) throw new Error('the sandbox has fewer than 3 events with listings');
  }, 60_000);
  afterAll(async () => {
    await t?.close();
  });

  const get = (path: string) => request(t.app.getHttpServer()).get(path).set(bearer(reader.key));
  const walksOf = async (eventId: string): Promise<number> =>
    Number(
      (
        await withPg(t.databaseUrl, (c) =>
          c.query<{ n: string }>(
            `SELECT count(*)::text AS n FROM sync_passes WHERE resource = 'event_listings' AND scope_event_id = $1`,
            [eventId],
          ),
        )
      ).rows[0].n,
    );

  const demandOf = async (id: string): Promise<number> =>
    (await withPg(t.databaseUrl, (c) => c.query(`SELECT 1 FROM event_demand WHERE event_id = $1`, [id])))
      .rowCount ?? 0;

  it('an event being read is walked again and again; a new listing is served within seconds, with the event’s own data_as_of', async () => {
    const [hot, cold] = eventIds;
    // The first read: the full pass's data_as_of at least (once this replica's state has it: within a second).
    await waitUntil(async () => {
      const first = await get(`/v1/events/${hot}/listings?limit=100`);
      const asOf = (first.body as Page).data_as_of;
      return first.status === 200 && asOf !== null && Date.parse(asOf) >= Date.parse(fullPassStart);
    }, 5000);

    const listed = t.sandbox.admin.seedListing({
      eventId: BigInt(hot),
      seller: { kind: 'user', subject: 'seller-live' },
      askPriceMinor: 1n,
    });
    const key = `${listed.event_id}:${listed.ticket_id}`;
    let page: Page | undefined;
    const took = await waitUntil(async () => {
      const res = await get(`/v1/events/${hot}/listings?limit=100`);
      page = res.body as Page;
      return page.items.some((i) => `${i.event_id}:${i.ticket_id}` === key);
    }, 15_000);
    expect(took).toBeLessThan(15_000);
    // The page's data_as_of is the event's newest complete walk, later than the full pass (within the state
    // refresh bound of the walk's completion, which can follow the commit that brought the listing).
    await waitUntil(async () => {
      page = (await get(`/v1/events/${hot}/listings?limit=100`)).body as Page;
      return Date.parse(page.data_as_of ?? '') > Date.parse(fullPassStart);
    }, 5000);
    expect(page?.stale).toBe(false);
    // It keeps being walked while read.
    const walks = await walksOf(hot);
    await waitUntil(async () => {
      await get(`/v1/events/${hot}`);
      return (await walksOf(hot)) >= walks + 2;
    }, 15_000);
    // The event detail carries the older of the events pass and the event's own listings data_as_of.
    const detail = await get(`/v1/events/${hot}`);
    expect(detail.status).toBe(200);
    expect((detail.body as { data_as_of: string }).data_as_of).toBeTruthy();
    // An event nobody reads is not walked, and cross-event pages keep the global data_as_of.
    expect(await walksOf(cold)).toBe(0);
    const all = await get('/v1/listings?limit=5');
    expect((all.body as Page).data_as_of).toBe(fullPassStart);
    // The hot set, the walks and the served staleness are metrics.
    const admin = await issueTestKey(t.app, ['admin']);
    const metrics = await request(t.app.getHttpServer()).get('/metrics').set(bearer(admin.key)).expect(200);
    expect(metrics.text).toMatch(/catalog_sync_hot_events \d/);
    expect(metrics.text).toMatch(/catalog_sync_hot_walks_total\{status="completed"\} [1-9]/);
    expect(metrics.text).toMatch(/mirror_staleness_seconds_count\{tier="hot"\} [1-9]/);
    expect(metrics.text).toContain('catalog_sync_hot_budget_share');
    expect(sync.isHot(BigInt(hot))).toBe(true);
    expect(sync.isHot(BigInt(cold))).toBe(false);
  }, 60_000);

  it('walkEvent: concurrent callers share one walk; fresh=true walks first; a walk too slow is answered stale from the mirror', async () => {
    const [, , eventId] = eventIds;
    const [a, b] = await Promise.all([sync.walkEvent(BigInt(eventId)), sync.walkEvent(BigInt(eventId))]);
    expect(a.status).toBe('completed');
    expect(b.id).toBe(a.id);

    const before = Date.now();
    const fresh = await get(`/v1/events/${eventId}/listings?fresh=true`);
    expect(fresh.status).toBe(200);
    expect(fresh.headers['cache-control']).toBe('private, no-cache');
    const body = fresh.body as Page;
    expect(body.stale).toBe(false);
    // Walked for this request (or joined a walk running then): newer than the full pass, about now.
    expect(Date.parse(body.data_as_of ?? '')).toBeGreaterThan(before - 5000);

    // The upstream answers too slowly for LISTINGS_FRESH_TIMEOUT_MS: the mirror's page, said to be stale.
    t.sandbox.admin.setFaults([{ operation: 'listings', kind: 'latency', latencyMs: 6000 }]);
    try {
      const slow = await get(`/v1/events/${eventId}/listings?fresh=true`);
      expect(slow.status).toBe(200);
      expect((slow.body as Page).stale).toBe(true);
      expect((slow.body as Page).items.length).toBeGreaterThan(0);
      // The same page without fresh is not stale (the event's data is recent).
      const plain = await get(`/v1/events/${eventId}/listings`);
      expect((plain.body as Page).stale).toBe(false);
    } finally {
      t.sandbox.admin.clearFaults();
    }

    const bad = await get('/v1/listings?fresh=true');
    expect(bad.status).toBe(400);
    expect(JSON.stringify(bad.body)).toContain('fresh');
  }, 60_000);

  it('a read answered 404 for its event notes no demand: made-up ids never enter the hot set', async () => {
    const [, known] = eventIds;
    const madeUp = '987654321987';
    for (let i = 0; i < 5; i++) {
      expect((await get(`/v1/events/${madeUp}`)).status).toBe(404);
      expect((await get(`/v1/events/${madeUp}/listings?limit=10`)).status).toBe(404);
      expect((await get(`/v1/listings/${madeUp}/1`)).status).toBe(404);
    }
    // A known event read after them: once its demand is flushed (about a second), theirs would have been too.
    expect((await get(`/v1/events/${known}`)).status).toBe(200);
    await waitUntil(async () => (await demandOf(known)) === 1, 10_000);
    expect(await demandOf(madeUp)).toBe(0);
    expect(sync.isHot(BigInt(madeUp))).toBe(false);
  }, 60_000);
});
