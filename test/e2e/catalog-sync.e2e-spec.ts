import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CatalogSyncService } from '../../src/catalog-sync/catalog-sync.service';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  mirrorEvents,
  mirrorListings,
  mirrorTupleFingerprint,
  passes,
  sandboxEvents,
  sandboxListings,
  walkSandbox,
} from '../support/catalog-mirror';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

describe('catalog sync against the in-process sandbox', () => {
  let t: TestApp;
  let admin: TestClient;
  let sync: CatalogSyncService;

  beforeAll(async () => {
    t = await startTestApp(
      { SYNC_ENABLED: 'false', SYNC_PAGE_SIZE: '37', SYNC_LEASE_TTL_MS: '3000' },
      { sandbox: { events: 30, listings: 700 } },
    );
    admin = await issueTestKey(t.app, ['admin']);
    sync = t.app.get(CatalogSyncService);
  });
  afterAll(async () => {
    await t?.close();
  });

  const sandboxState = async () => ({
    events: sandboxEvents(
      await walkSandbox(t.sandbox.url, t.sandbox.admin.apiKey, '/indexer/events/upcoming'),
    ),
    listings: sandboxListings(
      await walkSandbox(t.sandbox.url, t.sandbox.admin.apiKey, '/indexer/listings/active'),
    ),
  });

  it('a full pass of each resource mirrors the sandbox row by row; a second pass writes nothing', async () => {
    expect(await sync.runScheduled('events', 'schedule')).toBe(true);
    expect(await sync.runScheduled('listings', 'schedule')).toBe(true);
    const expected = await sandboxState();
    expect(expected.listings.length).toBeGreaterThan(600);
    expect(await mirrorEvents(t.databaseUrl)).toEqual(expected.events);
    expect(await mirrorListings(t.databaseUrl)).toEqual(expected.listings);

    const before = await mirrorTupleFingerprint(t.databaseUrl);
    const generation = await sync.generation();
    expect(await sync.runScheduled('events', 'schedule')).toBe(true);
    expect(await sync.runScheduled('listings', 'schedule')).toBe(true);
    expect(await mirrorTupleFingerprint(t.databaseUrl)).toBe(before);
    expect(await sync.generation()).toBe(generation);
    const records = await passes(t.databaseUrl);
    expect(records.slice(-2).map((p) => [p.status, p.upserted, p.removed])).toEqual([
      ['completed', '0', '0'],
      ['completed', '0', '0'],
    ]);
  });

  it('the operator API starts a pass (202), refuses a second one for the same scope (409) and shows it', async () => {
    const started = await request(t.app.getHttpServer())
      .post('/v1/admin/sync')
      .set(bearer(admin.key))
      .send({ resource: 'listings' })
      .expect(202);
    const passId = started.body.passId as string;
    expect(passId).toMatch(/^[0-9]+$/);
    const again = await request(t.app.getHttpServer())
      .post('/v1/admin/sync')
      .set(bearer(admin.key))
      .send({ resource: 'listings' });
    // Either the first pass is still running (409 naming it) or it already finished (a new pass, 202).
    expect(again.status === 409 ? again.body.error.details : { passId, status: again.status }).toEqual(
      again.status === 409 ? { passId } : { passId, status: 202 },
    );
    await waitUntil(async () => {
      const res = await request(t.app.getHttpServer()).get(`/v1/admin/sync/${passId}`).set(bearer(admin.key));
      return res.body.status === 'completed';
    }, 20_000);
    const status = await request(t.app.getHttpServer())
      .get('/v1/admin/sync')
      .set(bearer(admin.key))
      .expect(200);
    const listings = (status.body.resources as { resource: string; lastCompleted: { id: string } }[]).find(
      (r) => r.resource === 'listings',
    );
    expect(listings?.lastCompleted.id).toBeDefined();
  });

  it('rejects a bad body with 400 naming the field and an unknown pass with 404', async () => {
    const bad = await request(t.app.getHttpServer())
      .post('/v1/admin/sync')
      .set(bearer(admin.key))
      .send({ resource: 'tickets' })
      .expect(400);
    expect(JSON.stringify(bad.body)).toContain('resource');
    const badId = await request(t.app.getHttpServer())
      .post('/v1/admin/sync')
      .set(bearer(admin.key))
      .send({ resource: 'listings', event_id: '18446744073709551616x' })
      .expect(400);
    expect(JSON.stringify(badId.body)).toContain('event_id');
    await request(t.app.getHttpServer()).get('/v1/admin/sync/999999').set(bearer(admin.key)).expect(404);
    await request(t.app.getHttpServer()).get('/v1/admin/sync/abc').set(bearer(admin.key)).expect(404);
  });

  it('requires the admin scope', async () => {
    const reader = await issueTestKey(t.app, ['catalog:read']);
    const res = await request(t.app.getHttpServer()).get('/v1/admin/sync').set(bearer(reader.key));
    expect(res.status).toBe(403);
  });
});
