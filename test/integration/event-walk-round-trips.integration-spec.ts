import { Pool, type PoolClient } from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { SyncMetrics } from '../../src/catalog-sync/catalog-sync.metrics';
import { EventFreshnessRepository } from '../../src/catalog-sync/event-freshness.repository';
import { EventRepository } from '../../src/catalog-sync/event.repository';
import { ListingRepository } from '../../src/catalog-sync/listing.repository';
import { MirrorGenerationRepository } from '../../src/catalog-sync/mirror-generation.repository';
import { SyncPassRepository, type SyncPassRecord } from '../../src/catalog-sync/sync-pass.repository';
import { SyncPassRunner } from '../../src/catalog-sync/sync-pass.runner';
import { SyncConfig } from '../../src/config/sync.config';
import { NamedLeaseRepository } from '../../src/durable-work/named-lease.repository';
import type { UpstreamClient } from '../../src/upstream/upstream.client';
import type { ActiveListing, WalkPage } from '../../src/upstream/upstream.types';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

const EVENT = 77n;

type Upstream = Map<bigint, bigint>; // ticket -> price, all of EVENT

/** A fake upstream for one event: its listings in pages of `pageSize`; every request counted. */
function fakeUpstream(
  upstream: () => Upstream,
  pageSize: () => number,
  requests: { n: number },
): UpstreamClient {
  return {
    async *walkActiveListings(): AsyncGenerator<WalkPage<ActiveListing>, void, undefined> {
      const items: ActiveListing[] = [...upstream()].map(([ticketId, price]) => ({
        eventId: EVENT,
        ticketId,
        askPriceMinor: price,
        raw: { seller: 'S1' },
      }));
      const size = pageSize();
      let page = 0;
      let soFar = 0;
      do {
        requests.n++;
        const chunk = items.slice(page * size, (page + 1) * size);
        page++;
        soFar += chunk.length;
        const last = soFar >= items.length;
        await Promise.resolve();
        yield {
          items: chunk,
          page,
          itemsOnPage: chunk.length,
          itemsSoFar: soFar,
          nextCursor: last ? null : `c${page}`,
        };
        if (last) return;
      } while (page < 1000);
    },
  } as unknown as UpstreamClient;
}

/**
 * The round trips of a per-event walk (docs/catalog-sync.md "One-page walks"): every statement the runner sends
 * on a pooled connection or through the pool is counted (a wrapped `query`), and the walk's effects are checked
 * on real PostgreSQL.
 */
describe('per-event walk round trips (real PostgreSQL)', () => {
  const adminUrl = inject('databaseAdminUrl');
  let url: string;
  let pool: Pool;
  let upstream: Upstream;
  let pageSize = 1000;
  const requests = { n: 0 };
  const statements: string[] = [];
  let runner: SyncPassRunner;

  beforeAll(async () => {
    url = await createDatabaseFromTemplate(adminUrl);
    pool = new Pool({ connectionString: url, max: 4 });
    // Statements on checked-out clients (promise-style connect, as the runner checks out), and through
    // pool.query (which checks out with a callback: not counted twice).
    const counted = new WeakSet<PoolClient>();
    const connect = pool.connect.bind(pool) as (cb?: unknown) => Promise<PoolClient> | undefined;
    (pool as unknown as { connect: (cb?: unknown) => unknown }).connect = (cb?: unknown) => {
      if (cb !== undefined) return connect(cb);
      return (connect() as Promise<PoolClient>).then((client) => {
        if (!counted.has(client)) {
          counted.add(client);
          const query = client.query.bind(client) as (...args: unknown[]) => unknown;
          (client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
            statements.push(typeof args[0] === 'string' ? args[0] : 'submittable');
            return query(...args);
          };
        }
        return client;
      });
    };
    const poolQuery = pool.query.bind(pool) as (...args: unknown[]) => unknown;
    (pool as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
      statements.push(typeof args[0] === 'string' ? args[0] : 'pool');
      return poolQuery(...args);
    };
    const config = Object.assign(new SyncConfig(), { SYNC_PAGE_SIZE: 1000, SYNC_PROGRESS_LOG_MS: 600_000 });
    const quiet = { info: () => {}, warn: () => {}, error: () => {} };
    runner = new SyncPassRunner(
      pool,
      fakeUpstream(
        () => upstream,
        () => pageSize,
        requests,
      ),
      config,
      new NamedLeaseRepository(pool),
      new SyncPassRepository(pool),
      new EventRepository(),
      new ListingRepository(),
      new MirrorGenerationRepository(pool),
      new SyncMetrics(),
      quiet,
      'round-trips-test',
      new EventFreshnessRepository(pool),
    );
  });
  afterAll(async () => {
    await pool?.end();
    await dropDatabase(adminUrl, url);
  });
  beforeEach(async () => {
    await pool.query('TRUNCATE listings, sync_passes, job_leases, event_freshness');
    pageSize = 1000;
    upstream = new Map(Array.from({ length: 410 }, (_, i) => [BigInt(i + 1), 1000n + BigInt(i)]));
  });

  const walk = async (): Promise<SyncPassRecord> => {
    const started = await runner.start({ resource: 'event_listings', scopeEventId: EVENT, trigger: 'hot' });
    if (!started.started) throw new Error('lease busy');
    return started.done;
  };
  const mirror = async (): Promise<string[]> =>
    (
      await pool.query<{ k: string }>(
        `SELECT ticket_id::text || '=' || ask_price_minor::text AS k FROM listings
         WHERE event_id = $1 AND removed_at IS NULL ORDER BY ticket_id`,
        [EVENT.toString()],
      )
    ).rows.map((r) => r.k);
  const expected = (): string[] =>
    [...upstream].sort((a, b) => (a[0] < b[0] ? -1 : 1)).map(([t, p]) => `${t}=${p}`);

  it('a one-page walk costs at most 8 statements in two transactions and leaves the mirror, the pass, the lease and data_as_of right', async () => {
    // The first walk of a runner measures the database clock (the normal path); the next ones read first.
    expect((await walk()).status).toBe('completed');
    expect(await mirror()).toEqual(expected());
    const generation = async (): Promise<string> =>
      (await pool.query<{ g: string }>('SELECT generation::text AS g FROM mirror_generation')).rows[0].g;
    const before = await generation();

    upstream.delete(3n); // sold
    upstream.set(5n, 1n); // repriced
    upstream.set(900n, 42n); // newly listed
    statements.length = 0;
    const requestsBefore = requests.n;
    const pass = await walk();

    expect(requests.n - requestsBefore).toBe(1);
    expect(statements.length).toBeLessThanOrEqual(8);
    // Two transactions: lease + pass (committed with the attach), then fence + release + write + sweep +
    // completion; no connection is checked out while the page is read (the fake answers between them).
    expect(statements.filter((s) => s === 'BEGIN')).toHaveLength(2);
    expect(statements.some((s) => /TRUNCATE/i.test(s))).toBe(false);
    expect(pass).toMatchObject({ status: 'completed', pages: 1, items: 410, upserted: 2, removed: 1 });
    expect(await mirror()).toEqual(expected());
    const stored = await pool.query<{ status: string; upserted: string; removed: string; started_at: Date }>(
      `SELECT status, upserted::text, removed::text, started_at FROM sync_passes WHERE id = $1`,
      [pass.id],
    );
    expect(stored.rows[0]).toMatchObject({ status: 'completed', upserted: '2', removed: '1' });
    const fresh = await pool.query<{ data_as_of: Date; pass_id: string }>(
      `SELECT data_as_of, pass_id::text FROM event_freshness WHERE event_id = $1`,
      [EVENT.toString()],
    );
    expect(fresh.rows[0].pass_id).toBe(pass.id);
    expect(fresh.rows[0].data_as_of.getTime()).toBe(stored.rows[0].started_at.getTime());
    const lease = await pool.query<{ live: boolean }>(
      `SELECT expires_at > clock_timestamp() AS live FROM job_leases WHERE name = $1`,
      [`sync:event:${EVENT}`],
    );
    expect(lease.rows[0].live).toBe(false);
    expect(BigInt(await generation())).toBe(BigInt(before) + 1n);

    // Nothing changed upstream: zero writes, no generation bump, still at most 8 statements.
    statements.length = 0;
    const again = await walk();
    expect(again).toMatchObject({ status: 'completed', upserted: 0, removed: 0 });
    expect(statements.length).toBeLessThanOrEqual(8);
    expect(await generation()).toBe(String(BigInt(before) + 1n));
  });

  it('a walk over several pages continues from its first page (read once) and sweeps as before', async () => {
    expect((await walk()).status).toBe('completed');
    pageSize = 150;
    upstream.delete(400n);
    upstream.set(1n, 7n);
    const requestsBefore = requests.n;
    const pass = await walk();
    expect(pass).toMatchObject({ status: 'completed', pages: 3, items: 409, removed: 1 });
    expect(requests.n - requestsBefore).toBe(3);
    expect(await mirror()).toEqual(expected());
  });

  it('a walk whose event lease is live writes nothing and reports the running pass', async () => {
    expect((await walk()).status).toBe('completed');
    await pool.query(
      `UPDATE job_leases SET holder = 'other', pass_id = 12345, expires_at = clock_timestamp() + interval '1 minute'
       WHERE name = $1`,
      [`sync:event:${EVENT}`],
    );
    upstream.delete(1n);
    const started = await runner.start({ resource: 'event_listings', scopeEventId: EVENT, trigger: 'hot' });
    expect(started).toEqual({ started: false, runningPassId: '12345' });
    expect(await mirror()).toContain('1=1000');
  });
});
