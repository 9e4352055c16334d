import { execFile } from 'node:child_process';
import { TEST_DEPLOYMENT_ENV } from '../../bench/chaos/service-env';
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
  withPg,
} from '../support/catalog-mirror';
import { spawnService, useTempDataDir, waitForExit } from '../support/service-process';
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

  it('a listing listed upstream appears after an event refresh; cancelled ones disappear after the next pass', async () => {
    const [someListing] = await mirrorListings(t.databaseUrl);
    const eventId = BigInt(someListing?.key.split(':')[0] ?? '0');
    const listed = t.sandbox.admin.seedListing({
      eventId,
      seller: { kind: 'user', subject: 'seller-e2e' },
      askPriceMinor: 18446744073709551615n,
    });
    const generation = await sync.generation();
    const refresh = await sync.refreshEvent(eventId);
    expect(refresh).toMatchObject({
      status: 'completed',
      resource: 'event_listings',
      upserted: 1,
      removed: 0,
    });
    expect(await sync.generation()).toBe(generation + 1n);
    const keys = (await mirrorListings(t.databaseUrl)).map((l) => l.key);
    expect(keys).toContain(`${listed.event_id}:${listed.ticket_id}`);

    // The churn fault cancels 10 live listings and lists 10 new ones after serving one page.
    t.sandbox.admin.setFaults([{ operation: 'listings', kind: 'inventory_churn', churn: 10, times: 1 }]);
    await walkSandbox(t.sandbox.url, t.sandbox.admin.apiKey, '/indexer/listings/active');
    expect(await sync.runScheduled('listings', 'schedule')).toBe(true);
    expect(await mirrorListings(t.databaseUrl)).toEqual((await sandboxState()).listings);
    const [last] = (await passes(t.databaseUrl)).slice(-1);
    expect(last).toMatchObject({ status: 'completed', removed: '10' });
  });

  it('items with null identifiers are counted and logged per pass, never stored', async () => {
    t.sandbox.admin.setFaults([{ operation: 'listings', kind: 'null_ids', fraction: 0.5, times: 1 }]);
    const before = await mirrorListings(t.databaseUrl);
    const [someListing] = before;
    const eventId = BigInt(someListing?.key.split(':')[0] ?? '0');
    const refresh = await sync.refreshEvent(eventId);
    expect(refresh.skipped).toBeGreaterThan(0);
    const logged = t.logs.records().filter((r) => r.msg === 'sync skipped items without identifiers');
    expect(logged.at(-1)).toMatchObject({ passId: refresh.id });
    expect(t.logs.text).not.toContain(t.sandbox.admin.apiKey);
    // No row under an invented key: every mirrored key is a pair of u64 decimals.
    const { rows } = await withPg(t.databaseUrl, (c) =>
      c.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM listings WHERE event_id IS NULL OR ticket_id IS NULL`,
      ),
    );
    expect(rows[0]?.n).toBe(0);
    // The next full pass restores what that refresh could not identify.
    expect(await sync.runScheduled('listings', 'schedule')).toBe(true);
    expect(await mirrorListings(t.databaseUrl)).toEqual((await sandboxState()).listings);
  });

  it('exports pass metrics and caches the protocol config', async () => {
    const metrics = await request(t.app.getHttpServer()).get('/metrics').set(bearer(admin.key)).expect(200);
    expect(metrics.text).toMatch(
      /catalog_sync_pass_duration_seconds_count\{resource="listings",status="completed"\} \d+/,
    );
    expect(metrics.text).toMatch(/catalog_sync_lag_seconds\{resource="listings"\}/);
    expect(metrics.text).toMatch(/catalog_sync_skipped_total\{resource="event_listings"\} [1-9]/);
    const config = await sync.protocolConfig();
    expect(config).toMatchObject({ stablecoinDecimals: 6 });
  });

  it('npm run sync:verify reports a matching mirror with exit 0, and missing / extra / differing rows with exit 1', async () => {
    const verify = async (): Promise<{ code: number | null; out: string }> =>
      new Promise((resolve) => {
        execFile(
          process.execPath,
          ['dist/src/sync-verify.cli.js'],
          {
            env: {
              PATH: process.env.PATH ?? '',
              NODE_ENV: 'test',
              DATABASE_URL: t.databaseUrl,
              UPSTREAM_BASE_URL: t.sandbox.url,
              UPSTREAM_API_KEY: t.sandbox.admin.apiKey,
              UPSTREAM_ENVIRONMENT: 'sandbox',
              // A sandbox process by URL is a deployment: the CLI starts with its secrets like the service.
              ...TEST_DEPLOYMENT_ENV,
            },
            timeout: 60_000,
          },
          (error, stdout, stderr) =>
            resolve({
              code: error ? ((error as { code?: number }).code ?? 1) : 0,
              out: `${stdout}${stderr}`,
            }),
        );
      });
    t.sandbox.admin.clearFaults();
    expect(await sync.runScheduled('events', 'schedule')).toBe(true);
    expect(await sync.runScheduled('listings', 'schedule')).toBe(true);
    const clean = await verify();
    expect(clean).toMatchObject({ code: 0, out: expect.stringContaining('mirror matches the upstream') });

    const [first, second] = await mirrorListings(t.databaseUrl);
    const [e1, t1] = (first?.key ?? '').split(':');
    const [e2, t2] = (second?.key ?? '').split(':');
    await withPg(t.databaseUrl, async (c) => {
      await c.query(
        `UPDATE listings SET raw = raw || '{"tampered": true}' WHERE event_id = $1 AND ticket_id = $2`,
        [e1, t1],
      );
      await c.query(`UPDATE listings SET removed_at = now() WHERE event_id = $1 AND ticket_id = $2`, [
        e2,
        t2,
      ]);
      await c.query(
        `INSERT INTO listings (event_id, ticket_id, ask_price_minor, raw, first_seen_at, last_seen_at, observed_at)
         VALUES (1, 424242, 1, '{}', now(), now(), now())`,
      );
    });
    const dirty = await verify();
    expect(dirty.code).toBe(1);
    expect(dirty.out).toContain('missing 1, extra 1, differing 1');
    expect(dirty.out).toContain(`differing listings ${first?.key}`);
    expect(dirty.out).toContain(`missing listings ${second?.key}`);
    expect(dirty.out).toContain('extra listings 1:424242');
    expect(dirty.out).not.toContain(t.sandbox.admin.apiKey);
    // A pass repairs what it can observe; the extra row is swept by the next complete pass.
    expect(await sync.runScheduled('listings', 'schedule')).toBe(true);
    expect((await verify()).code).toBe(0);
  });
});

describe('catalog sync readiness (scheduled passes on)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp(
      {
        SYNC_ENABLED: 'true',
        SYNC_ON_STARTUP: 'false',
        SYNC_READY_GRACE_MS: '0',
        SYNC_STALE_AFTER_MS: '3000',
        SYNC_LISTINGS_INTERVAL_MS: '600000',
        SYNC_EVENTS_INTERVAL_MS: '600000',
      },
      { sandbox: { events: 5, listings: 50 } },
    );
  });
  afterAll(async () => {
    await t?.close();
  });

  it('is not ready before a complete pass of each resource, then ready; staleness is degraded but ready', async () => {
    const before = await request(t.app.getHttpServer()).get('/health/ready').expect(503);
    expect(before.body.error.details.details.catalogSync).toMatchObject({
      status: 'down',
      state: 'no complete pass',
    });
    const sync = t.app.get(CatalogSyncService);
    expect(await sync.runScheduled('events', 'schedule')).toBe(true);
    expect(await sync.runScheduled('listings', 'schedule')).toBe(true);
    const fresh = await request(t.app.getHttpServer()).get('/health/ready').expect(200);
    expect(fresh.body.details.catalogSync).toMatchObject({ status: 'up', listings: { stale: false } });
    await waitUntil(async () => {
      const res = await request(t.app.getHttpServer()).get('/health/ready');
      const details = res.body.details?.catalogSync;
      return res.status === 200 && details?.events?.stale === true && details?.listings?.stale === true;
    }, 10_000);
    const stale = await request(t.app.getHttpServer()).get('/health/ready').expect(200);
    expect(stale.body.details.catalogSync).toMatchObject({ listings: { stale: true }, state: 'degraded' });
  });
});

describe('the service as a process with no configuration', () => {
  const dataDirOf = useTempDataDir('bff-sync-');

  it('syncs the in-process sandbox at startup', async () => {
    const service = await spawnService({ DATA_DIR: dataDirOf() }, 60_000);
    try {
      const completed = (resource: string): boolean =>
        service
          .output()
          .split('\n')
          .some((l) => l.includes('"sync pass completed"') && l.includes(`"resource":"${resource}"`));
      await waitUntil(() => completed('events') && completed('listings'), 60_000);
    } finally {
      service.child.kill('SIGTERM');
      await waitForExit(service.child, 15_000);
    }
    expect(service.output()).not.toContain('sync pass failed');
  }, 150_000);
});
