import { Pool, type PoolClient } from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { mapListing, type ListingRow } from '../../src/catalog-sync/catalog-sync.mapper';
import { SyncMetrics } from '../../src/catalog-sync/catalog-sync.metrics';
import { EventFreshnessRepository } from '../../src/catalog-sync/event-freshness.repository';
import { EventRepository } from '../../src/catalog-sync/event.repository';
import { ListingBatch } from '../../src/catalog-sync/listing-batch';
import { ListingRepository } from '../../src/catalog-sync/listing.repository';
import { MirrorGenerationRepository } from '../../src/catalog-sync/mirror-generation.repository';
import { SyncPassRepository } from '../../src/catalog-sync/sync-pass.repository';
import { SyncPassRunner } from '../../src/catalog-sync/sync-pass.runner';
import { SyncConfig } from '../../src/config/sync.config';
import { NamedLeaseRepository } from '../../src/durable-work/named-lease.repository';
import type { UpstreamClient } from '../../src/upstream/upstream.client';
import type { ActiveListing, WalkPage } from '../../src/upstream/upstream.types';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

const U64_MAX = 18446744073709551615n;
const WATCHED = 7n;
const TRICKY = 'a"b\\c{d},e NULL \'f\' 🎫 \\u0041 "\\" \t\n\r \\N end';

function item(
  eventId: bigint,
  ticketId: bigint,
  price: bigint,
  extra: Record<string, unknown> = {},
): ActiveListing {
  return { eventId, ticketId, askPriceMinor: price, raw: { seller: 'S1', ...extra } };
}

function row(listing: ActiveListing): ListingRow {
  const mapped = mapListing(listing);
  if (!mapped.ok) throw new Error('unmappable fixture');
  return mapped.row;
}

const noHook = async (): Promise<void> => {};

/** A fake upstream walking `items` in pages of `size`; `beforePage(n)` runs before page n (1-based) is given. */
function fakeUpstream(
  items: () => ActiveListing[],
  size: number,
  beforePage: (page: number) => Promise<void>,
): UpstreamClient {
  return {
    async *walkActiveListings(): AsyncGenerator<WalkPage<ActiveListing>, void, undefined> {
      const all = items();
      for (let page = 1; page <= 1000; page++) {
        await beforePage(page);
        const chunk = all.slice((page - 1) * size, page * size);
        const last = page * size >= all.length;
        yield {
          items: chunk,
          page,
          itemsOnPage: chunk.length,
          itemsSoFar: Math.min(page * size, all.length),
          nextCursor: last ? null : `c${page}`,
        };
        if (last) return;
      }
    },
  } as unknown as UpstreamClient;
}

/**
 * A pass's writes as [rows copied directly, merges after them]: the direct copies must all come first. A batch is
 * also written once it is a second old (PageBatcher), so a stalled machine may cut the batches differently; the
 * rows copied before the first merge do not depend on where the cuts fall.
 */
function directThenMerged(writes: readonly (number | 'merge')[]): [number, number] {
  const firstMerge = writes.indexOf('merge');
  const direct = firstMerge === -1 ? writes : writes.slice(0, firstMerge);
  const rest = firstMerge === -1 ? [] : writes.slice(firstMerge);
  if (rest.some((w) => w !== 'merge')) throw new Error(`a direct copy after a merge: ${writes.join(',')}`);
  return [direct.reduce<number>((sum, w) => sum + (w === 'merge' ? 0 : w), 0), rest.length];
}

/** The repository, with the outcome of every batch a pass wrote: rows copied directly, or `merge`. */
class RecordingListings extends ListingRepository {
  readonly writes: (number | 'merge')[] = [];

  override async copyNew(db: PoolClient, batch: ListingBatch, passId: string): Promise<number | null> {
    const copied = await super.copyNew(db, batch, passId);
    if (copied !== null) this.writes.push(copied);
    return copied;
  }

  override async writeBatch(db: PoolClient, batch: ListingBatch, passId: string): Promise<number> {
    this.writes.push('merge');
    return super.writeBatch(db, batch, passId);
  }
}

/**
 * A listings backfill into an empty mirror COPYs its batches straight into `listings` (docs/catalog-sync.md
 * "Backfill: COPY straight into listings"): the rows and the triggers' work are the merge's, and a key another
 * writer inserted meanwhile sends the pass back to the merge without losing or overwriting anything.
 */
describe('listings backfill by direct COPY (real PostgreSQL)', () => {
  const adminUrl = inject('databaseAdminUrl');
  let url: string;
  let pool: Pool;
  let db: PoolClient;
  let generation: MirrorGenerationRepository;
  let clientId: string;

  beforeAll(async () => {
    url = await createDatabaseFromTemplate(adminUrl);
    pool = new Pool({ connectionString: url, max: 6 });
    db = await pool.connect();
    generation = new MirrorGenerationRepository(pool);
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO api_clients (name, key_prefix, key_hash, scopes)
       VALUES ('t', $1::text, sha256(convert_to($1::text, 'UTF8')), ARRAY['listings:read', 'watches:write'])
       RETURNING id`,
      ['trb_live_backfill00001'],
    );
    clientId = rows[0].id;
    // A catalog subscription and a watch on WATCHED: what the INSERT triggers have to serve.
    await pool.query(
      `INSERT INTO webhook_endpoints (client_id, url, event_types, event_ids, operator_events, secret)
       VALUES ($1, 'https://hooks.example.com/', '{}', $2::numeric[], false, '\\x00')`,
      [clientId, [WATCHED.toString()]],
    );
    await pool.query(`INSERT INTO watches (client_id, event_id, max_price_minor) VALUES ($1, $2, 500)`, [
      clientId,
      WATCHED.toString(),
    ]);
  });
  afterAll(async () => {
    db?.release();
    await pool?.end();
    await dropDatabase(adminUrl, url);
  });
  beforeEach(async () => {
    await pool.query(
      'TRUNCATE listings, sync_passes, job_leases, outbox_events, webhook_deliveries, watch_alerts',
    );
  });

  /** Every listing column, the timestamps as whether they are the writing transaction's now(). */
  const MIRROR = `SELECT event_id::text, ticket_id::text, ask_price_minor::text, expires_at::text, raw::text,
      first_seen_at = now() AS first_seen_now, last_seen_at = now() AS last_seen_now, removed_at,
      observed_at, last_seen_pass::text
    FROM listings ORDER BY event_id, ticket_id`;
  const announced = async (): Promise<unknown[]> =>
    (
      await pool.query(
        `SELECT o.type, o.client_id::text, o.payload,
           (SELECT count(*)::int FROM webhook_deliveries d WHERE d.event_id = o.id) AS deliveries
         FROM outbox_events o ORDER BY o.xact_id, o.position`,
      )
    ).rows;

  /** The mirror's rows, compactly. */
  const mirrorKeys = async () =>
    (
      await pool.query<{ key: string; price: string; removed: boolean; pass: string | null }>(
        `SELECT event_id || ':' || ticket_id AS key, ask_price_minor::text AS price, removed_at IS NOT NULL AS removed,
           last_seen_pass::text AS pass
         FROM listings ORDER BY event_id, ticket_id`,
      )
    ).rows;

  it('writes exactly the rows, catalog events and watch matches the merge writes, quiet or not', async () => {
    const observedAt = new Date(Date.UTC(2026, 0, 1));
    const pages = [
      [item(WATCHED, 3n, 400n, { note: TRICKY }), item(9n, 1n, 100n), item(WATCHED, 1n, 600n)],
      [
        item(U64_MAX, U64_MAX, U64_MAX, { expires_at: 1_900_000_000 }),
        item(WATCHED, 2n, 300n),
        item(1n, 5n, 1n),
      ],
    ];
    const listings = new ListingRepository();
    await listings.prepareSeen(db);
    const write = async (how: 'copy' | 'merge', quiet: boolean) => {
      await pool.query('TRUNCATE listings, outbox_events, webhook_deliveries, watch_alerts');
      const batch = new ListingBatch();
      for (const page of pages) expect(batch.add(page.map(row), observedAt)).toBe(true);
      await db.query('BEGIN');
      if (quiet) await generation.quietCatalog(db);
      const written =
        how === 'copy' ? await listings.copyNew(db, batch, '42') : await listings.writeBatch(db, batch, '42');
      const mirror = (await db.query(MIRROR)).rows;
      await db.query('COMMIT');
      return { written, mirror, announced: await announced() };
    };
    for (const quiet of [true, false]) {
      const merged = await write('merge', quiet);
      const copied = await write('copy', quiet);
      expect(copied).toEqual(merged);
      expect(copied.written).toBe(6);
      expect(copied.mirror).toHaveLength(6);
      expect(copied.mirror.every((r) => r.first_seen_now && r.last_seen_now && r.removed_at === null)).toBe(
        true,
      );
      const types = copied.announced.map((a) => (a as { type: string }).type).sort();
      // A backfill stays quiet but still matches watches (7:3 at 400 and 7:2 at 300 are under the watch's 500, 7:1 at 600 is not).
      expect(types).toEqual(
        quiet
          ? ['watch.matched', 'watch.matched']
          : ['listing.listed', 'listing.listed', 'listing.listed', 'watch.matched', 'watch.matched'],
      );
    }
  });

  it('a batch meeting a key already there writes nothing and leaves the transaction usable for the merge', async () => {
    const listings = new ListingRepository();
    await listings.prepareSeen(db);
    await listings.upsertPage(db, [row(item(9n, 2n, 50n))], new Date(Date.UTC(2026, 0, 2)), '1');
    const batch = new ListingBatch();
    batch.add(
      [row(item(9n, 1n, 10n)), row(item(9n, 2n, 20n)), row(item(WATCHED, 1n, 30n))],
      new Date(Date.UTC(2026, 0, 1)),
    );
    await db.query('BEGIN');
    expect(await listings.copyNew(db, batch, '2')).toBeNull();
    expect((await db.query(`SELECT count(*)::int AS n FROM listings`)).rows[0].n).toBe(1);
    // The older page does not overwrite 9:2; the other two rows are new.
    expect(await listings.writeBatch(db, batch, '2')).toBe(2);
    await db.query('COMMIT');
    const { rows } = await pool.query<{ key: string; price: string }>(
      `SELECT event_id || ':' || ticket_id AS key, ask_price_minor::text AS price FROM listings ORDER BY 1`,
    );
    expect(rows).toEqual([
      { key: '7:1', price: '30' },
      { key: '9:1', price: '10' },
      { key: '9:2', price: '50' },
    ]);
    // One announcement of 7:1 (its watch, no catalog subscriber is quiet here): the failed COPY announced nothing.
    expect((await announced()).map((a) => (a as { type: string }).type).sort()).toEqual([
      'listing.listed',
      'watch.matched',
    ]);
  });

  describe('a full pass into an empty mirror', () => {
    const PAGE = 50;
    const items = Array.from({ length: 600 }, (_, i) =>
      item(
        BigInt(100 + (i % 7)),
        BigInt(1000 - i),
        BigInt(1000 + i),
        i % 3 === 0 ? { expires_at: 2_000_000_000 + i } : {},
      ),
    );
    let beforePage: (page: number) => Promise<void> = noHook;
    let recording: RecordingListings;
    const pass = async () => {
      recording = new RecordingListings();
      const config = Object.assign(new SyncConfig(), {
        SYNC_PAGE_SIZE: PAGE,
        SYNC_WRITE_BATCH_ROWS: 100,
        SYNC_PROGRESS_LOG_MS: 600_000,
      });
      const quiet = { info: () => {}, warn: () => {}, error: () => {} };
      const runner = new SyncPassRunner(
        pool,
        fakeUpstream(
          () => items,
          PAGE,
          (page) => beforePage(page),
        ),
        config,
        new NamedLeaseRepository(pool),
        new SyncPassRepository(pool),
        new EventRepository(),
        recording,
        new MirrorGenerationRepository(pool),
        new SyncMetrics(),
        quiet,
        'backfill-test',
        new EventFreshnessRepository(pool),
      );
      const started = await runner.start({ resource: 'listings', scopeEventId: null, trigger: 'operator' });
      if (!started.started) throw new Error('lease busy');
      return started.done;
    };
    const expected = (passId: string, except: Record<string, string> = {}) =>
      items
        .map((i) => ({ key: `${i.eventId}:${i.ticketId}`, price: String(i.askPriceMinor) }))
        .sort((a, b) => {
          const [ae, at] = a.key.split(':').map(BigInt);
          const [be, bt] = b.key.split(':').map(BigInt);
          return ae !== be ? (ae < be ? -1 : 1) : at < bt ? -1 : 1;
        })
        .map((r) => ({
          ...r,
          price: except[r.key] ?? r.price,
          removed: false,
          pass: r.key in except ? null : passId,
        }));

    beforeEach(() => {
      beforePage = noHook;
    });

    it('copies every batch directly, and completes and sweeps as a merged pass', async () => {
      const done = await pass();
      expect(done).toMatchObject({ status: 'completed', items: 600, upserted: 600, removed: 0 });
      expect(directThenMerged(recording.writes)).toEqual([600, 0]);
      expect(await mirrorKeys()).toEqual(expected(done.id));
      // The next pass over the same upstream is no backfill: it merges, and changes nothing.
      const again = await pass();
      expect(again).toMatchObject({ status: 'completed', upserted: 0, removed: 0 });
      expect(recording.writes.every((w) => w === 'merge')).toBe(true);
    });

    it('a key another writer inserted mid-backfill: the merge from that batch on, the newer row kept, nothing lost', async () => {
      // Before page 6 (batch 3) is read, another connection inserts two keys of batch 4 (pages 7-8): one observed
      // later than any page of the pass (a live observation), one earlier (an older per-event page).
      const newer = `${items[320].eventId}:${items[320].ticketId}`;
      const older = `${items[330].eventId}:${items[330].ticketId}`;
      beforePage = async (page) => {
        if (page !== 6) return;
        const other = await pool.connect();
        try {
          await other.query(
            `INSERT INTO listings (event_id, ticket_id, ask_price_minor, raw, first_seen_at, last_seen_at,
               observed_at)
             VALUES ($1, $2, 7, '{"seller":"S2"}', now(), now(), now() + interval '1 hour'),
                    ($3, $4, 8, '{"seller":"S3"}', now(), now(), now() - interval '1 hour')`,
            [items[320].eventId, items[320].ticketId, items[330].eventId, items[330].ticketId].map(String),
          );
        } finally {
          other.release();
        }
      };
      const done = await pass();
      expect(done).toMatchObject({ status: 'completed', items: 600, removed: 0 });
      expect(done.upserted).toBe(599); // every row but the newer one
      // Pages 1-6 copied directly; page 7 holds both keys, so its batch and every later one merge.
      const [copied, merges] = directThenMerged(recording.writes);
      expect(copied).toBe(300);
      expect(merges).toBeGreaterThanOrEqual(3);
      const rows = await mirrorKeys();
      expect(rows).toEqual(
        expected(done.id, { [newer]: '7' }).map((r) => (r.key === older ? { ...r, pass: done.id } : r)),
      );
    });
  });
});
