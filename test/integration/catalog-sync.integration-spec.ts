import { Pool, type PoolClient } from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { mapListing, type ListingRow } from '../../src/catalog-sync/catalog-sync.mapper';
import { EventRepository } from '../../src/catalog-sync/event.repository';
import { ListingBatch } from '../../src/catalog-sync/listing-batch';
import { ListingRepository } from '../../src/catalog-sync/listing.repository';
import { MirrorGenerationRepository } from '../../src/catalog-sync/mirror-generation.repository';
import { SweepHold } from '../../src/catalog-sync/sweep-hold';
import { SyncPassRepository } from '../../src/catalog-sync/sync-pass.repository';
import { NamedLeaseRepository } from '../../src/durable-work/named-lease.repository';
import type { ActiveListing } from '../../src/upstream/upstream.types';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';

const U64_MAX = 18446744073709551615n;
/** A lease no test outlives: the lease test ends it explicitly instead of waiting for it. */
const LONG_LEASE_MS = 60_000;

const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

function ev(id: bigint, name: string) {
  return {
    eventId: id,
    name,
    startAtRaw: '2027-01-01T00:00:00Z',
    startAt: new Date('2027-01-01T00:00:00Z'),
    raw: JSON.stringify({ event_id: id.toString(), name }),
  };
}

async function tx<T>(pool: Pool, fn: (c: PoolClient) => Promise<T>): Promise<T> {
  const c = await pool.connect();
  try {
    await c.query('BEGIN');
    const r = await fn(c);
    await c.query('COMMIT');
    return r;
  } finally {
    c.release();
  }
}

function listing(
  eventId: bigint,
  ticketId: bigint,
  price: bigint,
  extra: Record<string, unknown> = {},
): ListingRow {
  const mapped = mapListing({ eventId, ticketId, askPriceMinor: price, raw: { seller: 'S1', ...extra } });
  if (!mapped.ok) throw new Error('unmappable fixture');
  return mapped.row;
}

/** An upstream listing item whose identifiers may be null (skipped by the mapper, noted by SweepHold). */
function nullListing(eventId: bigint | null, ticketId: bigint | null): ActiveListing {
  return { eventId, ticketId, askPriceMinor: 1n, raw: {} };
}

describe('catalog-sync repositories (real PostgreSQL)', () => {
  const adminUrl = inject('databaseAdminUrl');
  let url: string;
  let pool: Pool;
  let db: PoolClient;
  const listings = new ListingRepository();
  const events = new EventRepository();
  let passes: SyncPassRepository;
  let leases: NamedLeaseRepository;
  let generation: MirrorGenerationRepository;

  beforeAll(async () => {
    url = await createDatabaseFromTemplate(adminUrl);
    pool = new Pool({ connectionString: url, max: 4 });
    db = await pool.connect();
    passes = new SyncPassRepository(pool);
    leases = new NamedLeaseRepository(pool);
    generation = new MirrorGenerationRepository(pool);
  });
  afterAll(async () => {
    db?.release();
    await pool?.end();
    await dropDatabase(adminUrl, url);
  });
  beforeEach(async () => {
    await db.query('TRUNCATE listings, events, sync_passes, job_leases');
    await listings.prepareSeen(db);
    await events.prepareSeen(db);
  });

  const row = async (e: bigint, t: bigint) =>
    (
      await db.query<{ price: string; removed_at: Date | null; raw: Record<string, unknown> }>(
        `SELECT ask_price_minor::text AS price, removed_at, raw FROM listings WHERE event_id = $1 AND ticket_id = $2`,
        [e.toString(), t.toString()],
      )
    ).rows[0];

  /** n_tup_ins + n_tup_upd + n_tup_del of the mirror tables, this connection's pending counts flushed. */
  const tupleWrites = async (): Promise<number> => {
    await db.query('SELECT pg_stat_force_next_flush()');
    await db.query('SELECT 1');
    await new Promise((r) => setTimeout(r, 300));
    const other = await pool.connect();
    try {
      const { rows } = await other.query<{ n: string }>(
        `SELECT coalesce(sum(n_tup_ins + n_tup_upd + n_tup_del), 0)::text AS n FROM pg_stat_user_tables
         WHERE relname IN ('listings', 'events')`,
      );
      return Number(rows[0]?.n);
    } finally {
      other.release();
    }
  };

  it('writes new rows, and an unchanged page writes nothing (pg_stat_user_tables counts no tuple)', async () => {
    const page = [listing(1n, 1n, 100n), listing(1n, 2n, U64_MAX), listing(U64_MAX, U64_MAX, 5n)];
    expect(await listings.upsertPage(db, page, at(1), '1')).toBe(3);
    const before = await tupleWrites();
    expect(await listings.upsertPage(db, page, at(2), '2')).toBe(0);
    expect(await listings.upsertPage(db, page.toReversed(), at(3), '3')).toBe(0);
    expect(await tupleWrites()).toBe(before);
    // The measurement sees a real change.
    expect(await listings.upsertPage(db, [listing(1n, 1n, 101n)], at(4), '4')).toBe(1);
    expect(await tupleWrites()).toBeGreaterThan(before);
    expect((await row(1n, 2n))?.price).toBe(U64_MAX.toString());
    expect((await row(U64_MAX, U64_MAX))?.raw).toMatchObject({ event_id: U64_MAX.toString() });
  });

  it('COPY text keeps any text exactly (quotes, backslashes, tabs, newlines, braces, commas, unicode)', async () => {
    const tricky = 'a"b\\c{d},e NULL \'f\' 🎫 \\u0041 "\\" \t\n\r \\N end';
    await listings.upsertPage(
      db,
      [listing(2n, 1n, 1n, { note: tricky, nested: { list: [tricky, 'x'] } })],
      at(1),
      '1',
    );
    expect((await row(2n, 1n))?.raw).toMatchObject({ note: tricky, nested: { list: [tricky, 'x'] } });
  });

  it('never overwrites a row with data older than what it holds (stale-write guard)', async () => {
    await listings.upsertPage(db, [listing(3n, 1n, 500n)], at(10), '1');
    expect(await listings.upsertPage(db, [listing(3n, 1n, 400n)], at(5), '2')).toBe(0);
    expect((await row(3n, 1n))?.price).toBe('500');
    expect(await listings.upsertPage(db, [listing(3n, 1n, 600n)], at(11), '3')).toBe(1);
    expect((await row(3n, 1n))?.price).toBe('600');
  });

  it('a batch of pages: one COPY + merge, per-page stale-write guard, a repeated key refused', async () => {
    await listings.upsertPage(db, [listing(8n, 1n, 100n)], at(10), '1');
    await listings.upsertPage(db, [listing(8n, 2n, 100n)], at(1), '1');
    // Older than what 8:1 holds: not written. 8:3 is new; 8:2 comes again on the next page, which the batch
    // refuses (a merge cannot touch a row twice): the runner writes the batch and starts a new one with it.
    const batch = new ListingBatch();
    expect(batch.add([listing(8n, 1n, 50n), listing(8n, 3n, 1n), listing(8n, 2n, 200n)], at(5))).toBe(true);
    expect(batch.add([listing(8n, 2n, 300n), listing(8n, 4n, 1n)], at(12))).toBe(false);
    expect(batch.add([listing(8n, 4n, 1n)], at(12))).toBe(true);
    expect(batch.add([], at(13))).toBe(true);
    expect(batch.rows).toBe(4);
    const written = await listings.writeBatch(db, batch, '2');
    expect(written).toBe(3);
    expect((await row(8n, 1n))?.price).toBe('100');
    expect((await row(8n, 2n))?.price).toBe('200');
    const observed = await db.query<{ t: string; observed_at: Date }>(
      `SELECT ticket_id::text AS t, observed_at FROM listings WHERE event_id = 8 ORDER BY ticket_id`,
    );
    expect(observed.rows.map((r) => [r.t, r.observed_at.toISOString()])).toEqual([
      ['1', at(10).toISOString()],
      ['2', at(5).toISOString()],
      ['3', at(5).toISOString()],
      ['4', at(12).toISOString()],
    ]);
    // Every key of the batch counts as seen (8:1 too: the upstream has it, only its data was older).
    expect(await listings.sweep(db, at(20), '2', 8n)).toBe(0);
  });

  it('the sweep of a completed pass removes unseen rows only, keeps rows observed since it started, revives', async () => {
    await listings.upsertPage(
      db,
      [listing(4n, 1n, 1n), listing(4n, 2n, 1n), listing(5n, 1n, 1n)],
      at(1),
      '1',
    );
    await listings.prepareSeen(db);
    // Pass 2 starts at t=10 and sees only 4:1; meanwhile an event refresh observed 4:2 at t=12.
    await listings.upsertPage(db, [listing(4n, 1n, 1n)], at(10), '2');
    const refresh = await pool.connect();
    try {
      await listings.prepareSeen(refresh);
      await listings.upsertPage(refresh, [listing(4n, 2n, 2n)], at(12), '3');
    } finally {
      await listings.dropSeen(refresh);
      refresh.release();
    }
    expect(await listings.sweep(db, at(10), '2', null)).toBe(1);
    expect((await row(5n, 1n))?.removed_at).not.toBeNull();
    expect((await row(4n, 2n))?.removed_at).toBeNull();
    expect((await row(4n, 1n))?.removed_at).toBeNull();
    // A slower pass that saw 5:1 before the removal cannot revive it; a later observation does.
    await listings.prepareSeen(db);
    expect(await listings.upsertPage(db, [listing(5n, 1n, 1n)], at(9), '4')).toBe(0);
    expect(await listings.upsertPage(db, [listing(5n, 1n, 1n)], at(20), '5')).toBe(1);
    expect((await row(5n, 1n))?.removed_at).toBeNull();
  });

  it('an event refresh sweeps only its event', async () => {
    await listings.upsertPage(
      db,
      [listing(6n, 1n, 1n), listing(6n, 2n, 1n), listing(7n, 1n, 1n)],
      at(1),
      '1',
    );
    await listings.prepareSeen(db);
    await listings.upsertPage(db, [listing(6n, 1n, 1n)], at(10), '2');
    expect(await listings.sweep(db, at(10), '2', 6n)).toBe(1);
    expect((await row(6n, 2n))?.removed_at).not.toBeNull();
    expect((await row(7n, 1n))?.removed_at).toBeNull();
  });

  it('the sweep leaves every row an item with a null identifier could be (issue 23, item 2)', async () => {
    const keys: [bigint, bigint][] = [
      [20n, 1n],
      [20n, 2n],
      [21n, 1n],
      [21n, 5n],
      [22n, 9n],
    ];
    await listings.upsertPage(
      db,
      keys.map(([e, t]) => listing(e, t, 1n)),
      at(1),
      '1',
    );
    await listings.prepareSeen(db);
    // Pass 2 saw none of them by key, but one item of event 20 had ticket_id null and one of ticket 5 had
    // event_id null: only 21:1 and 22:9 are provably gone.
    const hold = new SweepHold();
    hold.note([nullListing(20n, null), nullListing(null, 5n)], false);
    expect(await listings.sweep(db, at(10), '2', null, hold)).toBe(2);
    const live = await db.query<{ k: string }>(
      `SELECT event_id || ':' || ticket_id AS k FROM listings WHERE event_id >= 20 AND removed_at IS NULL
       ORDER BY 1`,
    );
    expect(live.rows.map((r) => r.k)).toEqual(['20:1', '20:2', '21:5']);
    // An item with no identifier at all holds the whole sweep; so does an event without id.
    const all = new SweepHold();
    all.note([nullListing(null, null)], false);
    expect(await listings.sweep(db, at(10), '2', null, all)).toBe(0);
    const noEventId = new SweepHold();
    noEventId.note([{ eventId: null, name: 'x', startAt: 'x', raw: {} }], true);
    expect(await events.sweep(db, at(10), '2', noEventId)).toBe(0);
  });

  it('events: upsert, no-op and sweep', async () => {
    expect(await events.upsertPage(db, [ev(1n, 'A'), ev(U64_MAX, 'B')], at(1), '1')).toBe(2);
    await events.prepareSeen(db);
    expect(await events.upsertPage(db, [ev(U64_MAX, 'B')], at(10), '2')).toBe(0);
    expect(await events.sweep(db, at(10), '2')).toBe(1);
    const { rows } = await db.query<{ id: string }>(
      `SELECT event_id::text AS id FROM events WHERE removed_at IS NULL`,
    );
    expect(rows).toEqual([{ id: U64_MAX.toString() }]);
  });

  it('the mirror generation bumps by one and notifies', async () => {
    const listener = await pool.connect();
    try {
      const heard: string[] = [];
      listener.on('notification', (n) => heard.push(n.payload ?? ''));
      await listener.query('LISTEN mirror_generation');
      const before = await generation.current();
      await db.query('BEGIN');
      const next = await generation.bump(db);
      await db.query('COMMIT');
      expect(next).toBe(before + 1n);
      // The NOTIFY is delivered after the COMMIT, asynchronously: wait for it (bounded), then check it is the one
      // notification, carrying the new generation.
      await waitUntil(() => heard.length > 0, 5_000, 10);
      expect(heard).toEqual([next.toString()]);
    } finally {
      await listener.query('UNLISTEN *');
      listener.release();
    }
  });

  it('leases: one holder at a time, takeover after expiry with a new fencing token, abandoned pass failed', async () => {
    // Leases far longer than the test: A's lease ends only when the test expires it below, never because the
    // statements before that happened to be slow.
    const first = await tx(pool, async (c) => {
      const lease = await leases.acquire(c, 'sync:listings', 'A', LONG_LEASE_MS);
      if (!lease.acquired) throw new Error('expected the lease');
      const pass = await passes.create(c, {
        resource: 'listings',
        scopeEventId: null,
        trigger: 'schedule',
        holder: 'A',
        fencingToken: lease.fencingToken,
      });
      await leases.attachPass(c, 'sync:listings', lease.fencingToken, pass.id);
      return { lease, pass };
    });
    const busy = await tx(pool, (c) => leases.acquire(c, 'sync:listings', 'B', LONG_LEASE_MS));
    expect(busy).toMatchObject({ acquired: false, holder: 'A', passId: first.pass.id });
    expect(
      await tx(pool, (c) =>
        leases.holds(c, 'sync:listings', first.lease.acquired ? first.lease.fencingToken : ''),
      ),
    ).toBe(true);
    expect(await passes.failAbandoned()).toEqual([]);

    // A's lease runs out (on the database clock, which is what the lease compares against).
    await db.query(
      `UPDATE job_leases SET expires_at = clock_timestamp() - interval '1 ms' WHERE name = 'sync:listings'`,
    );
    const second = await tx(pool, (c) => leases.acquire(c, 'sync:listings', 'B', LONG_LEASE_MS));
    expect(second.acquired).toBe(true);
    if (!second.acquired || !first.lease.acquired) return;
    expect(BigInt(second.fencingToken)).toBe(BigInt(first.lease.fencingToken) + 1n);
    expect(second.previous).toEqual({ holder: 'A', passId: first.pass.id });
    // The old holder's writes are fenced off and renewals fail.
    expect(
      await tx(pool, (c) =>
        leases.holds(c, 'sync:listings', first.lease.acquired ? first.lease.fencingToken : ''),
      ),
    ).toBe(false);
    expect(await leases.renew('sync:listings', first.lease.fencingToken, LONG_LEASE_MS)).toBe(false);
    expect(await passes.failAbandoned()).toEqual([{ id: first.pass.id, resource: 'listings' }]);
    expect((await passes.get(first.pass.id))?.status).toBe('failed');
  });
});
