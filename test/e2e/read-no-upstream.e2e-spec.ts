import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogSyncService } from '../../src/catalog-sync/catalog-sync.service';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { withPg } from '../support/catalog-mirror';
import { CountingProxy } from '../support/counting-proxy';
import { startTestApp, type TestApp } from '../support/test-app';

/**
 * Issue 30 (read path): "a read never waits for the upstream by default", and `?fresh=true` on an event's listing
 * page walks that event first. Every request the app sends upstream goes through a counting proxy: the catalog
 * reads answer from the mirror with none, the fresh page with the event's own walk and nothing else.
 */
describe('read API: no upstream call unless fresh=true', () => {
  let t: TestApp;
  let proxy: CountingProxy | undefined;
  let reader: TestClient;
  let eventId: string;
  let ticketId: string;

  beforeAll(async () => {
    t = await startTestApp(
      { LISTINGS_FRESH_TIMEOUT_MS: '5000' },
      {
        sandbox: { events: 4, listings: 40 },
        upstreamVia: async (sandboxUrl) => {
          proxy = await CountingProxy.start(sandboxUrl);
          return proxy.url;
        },
      },
    );
    reader = await issueTestKey(t.app, ['catalog:read']);
    // Scheduled passes are off in test apps: the mirror is filled by one events and one listings pass.
    const sync = t.app.get(CatalogSyncService);
    for (const resource of ['events', 'listings'] as const) {
      if (!(await sync.runScheduled(resource, 'startup'))) throw new Error(`no ${resource} pass ran`);
    }
    const row = await withPg(t.databaseUrl, (c) =>
      c.query<{ event_id: string; ticket_id: string }>(
        `SELECT event_id::text, ticket_id::text FROM listings WHERE removed_at IS NULL ORDER BY 1, 2 LIMIT 1`,
      ),
    );
    ({ event_id: eventId, ticket_id: ticketId } = row.rows[0]);
  }, 60_000);
  afterAll(async () => {
    await t?.close();
    await proxy?.close();
  });

  const get = (path: string) => request(t.app.getHttpServer()).get(path).set(bearer(reader.key));

  it('event lists, an event, its listing page, the listing search and a single listing send nothing upstream', async () => {
    const before = proxy!.requests.length;
    const paths = [
      '/v1/events',
      `/v1/events/${eventId}`,
      `/v1/events/${eventId}/listings`,
      `/v1/events/${eventId}/listings?sort=price_asc&limit=5`,
      `/v1/listings?min_price=0&sort=price_desc`,
      `/v1/listings/${eventId}/${ticketId}`,
    ];
    for (const path of paths) {
      const res = await get(path);
      expect({ path, status: res.status }).toEqual({ path, status: 200 });
    }
    // A read that had reached upstream would be counted before its answer: nothing arrived meanwhile.
    expect(proxy!.requests.slice(before).map((r) => r.path)).toEqual([]);
  });

  it('fresh=true walks that event (and only it) before answering', async () => {
    const before = proxy!.requests.length;
    const res = await get(`/v1/events/${eventId}/listings?fresh=true`);
    expect(res.status).toBe(200);
    expect(res.body.stale).toBe(false);
    const sent = proxy!.requests.slice(before).map((r) => r.path);
    expect(sent.length).toBeGreaterThan(0);
    for (const path of sent) {
      expect(path.startsWith('/indexer/listings/active?')).toBe(true);
      expect(new URL(path, 'http://x').searchParams.get('eventId')).toBe(eventId);
    }
  });
});
