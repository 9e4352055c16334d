import type { Pool, PoolClient } from 'pg';
import type { DataSource } from 'typeorm';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { CatalogMirrorRepository } from '../../src/catalog-sync/catalog-mirror.repository';
import { mapListing, type ListingRow } from '../../src/catalog-sync/catalog-sync.mapper';
import { ListingRepository } from '../../src/catalog-sync/listing.repository';
import { pgPool } from '../../src/database/data-source';
import { WatchRepository, type NewWatch, type WatchRow } from '../../src/watches/watch.repository';
import type { WatchMatchedData } from '../../src/webhooks/webhook-events';
import { openTestDataSource, type TestDataSource } from '../support/test-database';

const EVENT = 7001n;
const OTHER_EVENT = 7002n;

function row(eventId: bigint, ticketId: bigint, price: bigint, seller = 'S1'): ListingRow {
  const mapped = mapListing({ eventId, ticketId, askPriceMinor: price, raw: { seller } });
  if (!mapped.ok) throw new Error('unmappable fixture');
  return mapped.row;
}

let clients = 0;
async function insertClient(dataSource: DataSource): Promise<string> {
  const [created] = await dataSource.query<{ id: string }[]>(
    `INSERT INTO api_clients (name, key_prefix, key_hash, scopes)
     VALUES ('t', $1::text, sha256(convert_to($1::text, 'UTF8')), ARRAY['watches:write']) RETURNING id`,
    [`trb_live_watch${String(++clients).padStart(6, '0')}`],
  );
  if (!created) throw new Error('client not inserted');
  return created.id;
}

/**
 * The watch match (migrations/…-CreateWatchMatchTriggers.ts) on every write path of the mirror: a sync batch
 * (ListingRepository.writeBatch, the path of full passes and per-event walks), a live observation
 * (CatalogMirrorRepository.applyLiveListing) and plain SQL.
 */
/** Orders [client, …] rows by client id. */
const byClient = (a: string[], b: string[]): number => (a[0] < b[0] ? -1 : 1);

describe('watch match (listings triggers)', () => {
  let db: TestDataSource;
  let dataSource: DataSource;
  let pool: Pool;
  let watches: WatchRepository;
  let mirror: CatalogMirrorRepository;
  const listings = new ListingRepository();
  let clientA: string;
  let clientB: string;
  let observed = Date.UTC(2026, 0, 1);
  /** A later observation instant each time (the stale-write guard only takes newer observations). */
  const next = (): Date => new Date((observed += 1000));

  const watch = async (input: Partial<NewWatch> & { clientId: string }): Promise<WatchRow> => {
    const created = await watches.create(
      {
        eventId: EVENT,
        query: null,
        maxPriceMinor: null,
        minDropPercent: null,
        subject: null,
        cooldownSeconds: null,
        expiresAt: null,
        ...input,
      },
      1000,
      366,
    );
    if (typeof created === 'string') throw new Error(created);
    return created;
  };

  /** One sync batch (a page of a pass or a walk) in its own transaction on its own connection. */
  const writePage = async (rows: ListingRow[], at = next(), client?: PoolClient): Promise<number> => {
    const c = client ?? (await pool.connect());
    try {
      await listings.prepareSeen(c);
      await c.query('BEGIN');
      const written = await listings.upsertPage(c, rows, at, '1');
      await c.query('COMMIT');
      return written;
    } finally {
      if (!client) c.release();
    }
  };

  const matches = async (clientId?: string): Promise<(WatchMatchedData & { client: string })[]> => {
    const rows = await dataSource.query<{ payload: WatchMatchedData; client_id: string }[]>(
      `SELECT payload, client_id::text FROM outbox_events WHERE type = 'watch.matched'
         AND ($1::uuid IS NULL OR client_id = $1::uuid) ORDER BY position`,
      [clientId ?? null],
    );
    return rows.map((r) => ({ ...r.payload, client: r.client_id }));
  };
  const reasons = async (): Promise<string[]> =>
    (await matches()).map((m) => `${m.listing.ticket_id}@${m.listing.price.minor}:${m.reason}`);

  beforeAll(async () => {
    db = await openTestDataSource(inject('databaseAdminUrl'), { poolSize: 6 });
    dataSource = db.dataSource;
    pool = pgPool(dataSource);
    watches = new WatchRepository(dataSource);
    mirror = new CatalogMirrorRepository(dataSource, pool);
    clientA = await insertClient(dataSource);
    clientB = await insertClient(dataSource);
  });
  afterAll(() => db?.close());
  beforeEach(async () => {
    await dataSource.query(`DELETE FROM watches`);
    await dataSource.query(`DELETE FROM listings`);
    await dataSource.query(`DELETE FROM outbox_events`);
    await dataSource.query(`DELETE FROM protocol_config`);
  });

  it('a new listing at or under the max price matches, with the exact and the formatted price; above it does not', async () => {
    await dataSource.query(
      `INSERT INTO protocol_config (stablecoin_decimals, stablecoin_mint, raw, fetched_at)
       VALUES (6, 'MINT', '{}', now())`,
    );
    const w = await watch({ clientId: clientA, maxPriceMinor: 80_000_000n, subject: 'alice' });
    await writePage([row(EVENT, 1n, 79_500_000n), row(EVENT, 2n, 80_000_001n), row(OTHER_EVENT, 3n, 1n)]);
    const found = await matches();
    expect(found).toEqual([
      {
        client: clientA,
        watch_id: w.id,
        subject: 'alice',
        listing: {
          event_id: '7001',
          ticket_id: '1',
          price: { minor: '79500000', decimals: 6, amount: '79.5', currency_mint: 'MINT' },
        },
        previous_price: null,
        reason: 'listed_under_max',
      },
    ]);
  });

  it('formats every price as watch_money does (decimals 0, 2, 6, 18; small, round, u64 max; previous too)', async () => {
    // The match writes the formatting out (migrations/…-WatchMatchCooldownOnlyTouch.ts); watch_money is the reference.
    const prices = [1n, 10n, 1_000_000n, 79_500_000n, 123_456_789n, 18446744073709551615n];
    for (const decimals of [0, 2, 6, 18]) {
      await dataSource.query(`DELETE FROM protocol_config`);
      await dataSource.query(`DELETE FROM outbox_events`);
      await dataSource.query(`DELETE FROM watches`);
      await dataSource.query(`DELETE FROM listings`);
      await dataSource.query(
        `INSERT INTO protocol_config (stablecoin_decimals, stablecoin_mint, raw, fetched_at)
         VALUES ($1, 'MINT', '{}', now())`,
        [decimals],
      );
      await watch({ clientId: clientA, minDropPercent: 1 });
      await writePage(prices.map((p, i) => row(EVENT, BigInt(i + 1), p)));
      // Each listing drops to a tenth (1 to 0): previous_price is formatted too.
      await writePage(prices.map((p, i) => row(EVENT, BigInt(i + 1), p > 9n ? p / 10n : 0n)));
      const found = await matches();
      expect(found).toHaveLength(prices.length);
      for (const m of found) {
        const [expected] = await dataSource.query<{ price: unknown; previous: unknown }[]>(
          `SELECT watch_money($1::numeric, $3::smallint, 'MINT') AS price,
                  watch_money($2::numeric, $3::smallint, 'MINT') AS previous`,
          [m.listing.price.minor, m.previous_price?.minor, decimals],
        );
        expect({ price: m.listing.price, previous: m.previous_price }).toEqual(expected);
      }
    }
  });

  it('formats nothing while the protocol config is unknown (minor units and the reason)', async () => {
    await watch({ clientId: clientA, maxPriceMinor: 100n });
    await writePage([row(EVENT, 1n, 100n)]);
    const [only] = await matches();
    expect(only?.listing.price).toEqual({
      minor: '100',
      unformatted_reason:
        'protocol config not fetched from the upstream yet: stablecoin_decimals unknown, amount not formatted',
    });
  });

  it('a drop of at least the percentage matches (price_drop), a smaller one does not; a fall under the max is dropped_under_max', async () => {
    await writePage([row(EVENT, 1n, 1000n), row(EVENT, 2n, 1000n)]);
    await watch({ clientId: clientA, minDropPercent: 10 });
    await watch({ clientId: clientB, maxPriceMinor: 700n });
    await writePage([row(EVENT, 1n, 901n), row(EVENT, 2n, 1100n)]); // 9.9 %: nothing; a rise: nothing
    expect(await reasons()).toEqual([]);
    await writePage([row(EVENT, 1n, 811n)]); // 901 → 811: 9.99 %, still under 10
    expect(await reasons()).toEqual([]);
    await writePage([row(EVENT, 1n, 729n)]); // 811 → 729: 10.1 %; still above B's max
    expect(await reasons()).toEqual(['1@729:price_drop']);
    await writePage([row(EVENT, 2n, 650n)]); // 1100 → 650: 40.9 %, and under B's max from above it
    const found = await matches();
    // One statement announces both: their order within it is not defined.
    expect(
      found
        .slice(1)
        .map((m) => [m.client, m.reason, m.previous_price?.minor ?? ''])
        .sort(byClient),
    ).toEqual(
      [
        [clientA, 'price_drop', '1100'],
        [clientB, 'dropped_under_max', '1100'],
      ].sort(byClient),
    );
  });

  it('never the same listing twice at the same price: unchanged rewrites, other fields, a removal and re-listing', async () => {
    await watch({ clientId: clientA, maxPriceMinor: 500n });
    await writePage([row(EVENT, 1n, 400n)]);
    await writePage([row(EVENT, 1n, 400n)]); // unchanged: not written at all
    await writePage([row(EVENT, 1n, 400n, 'S2')]); // another field changed: written, same price
    await dataSource.query(`UPDATE listings SET removed_at = now() WHERE ticket_id = 1`);
    await writePage([row(EVENT, 1n, 400n)]); // re-listed at the same price
    expect(await reasons()).toEqual(['1@400:listed_under_max']);
    await dataSource.query(`UPDATE listings SET removed_at = now() WHERE ticket_id = 1`);
    await writePage([row(EVENT, 1n, 300n)]); // re-listed cheaper: a new price
    expect(await reasons()).toEqual(['1@400:listed_under_max', '1@300:listed_under_max']);
  });

  it('an expired or deleted watch matches nothing', async () => {
    const expiring = await watch({
      clientId: clientA,
      maxPriceMinor: 500n,
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const deleted = await watch({ clientId: clientA, maxPriceMinor: 500n });
    await dataSource.query(`UPDATE watches SET expires_at = now() - interval '1 second' WHERE id = $1`, [
      expiring.id,
    ]);
    expect(await watches.delete(clientA, deleted.id)).toBe(true);
    await watch({ clientId: clientB, maxPriceMinor: 500n });
    await writePage([row(EVENT, 1n, 100n)]);
    expect((await matches()).map((m) => m.client)).toEqual([clientB]);
  });

  it("a client never receives another client's matches: each event goes to its watch's client only", async () => {
    const a = await watch({ clientId: clientA, maxPriceMinor: 500n });
    const b = await watch({ clientId: clientB, maxPriceMinor: 200n });
    await writePage([row(EVENT, 1n, 300n), row(EVENT, 2n, 100n)]);
    expect(
      (await matches(clientA))
        .map((m) => [m.watch_id, m.listing.ticket_id])
        .toSorted((x, y) => x[1].localeCompare(y[1])),
    ).toEqual([
      [a.id, '1'],
      [a.id, '2'],
    ]);
    expect((await matches(clientB)).map((m) => [m.watch_id, m.listing.ticket_id])).toEqual([[b.id, '2']]);
  });

  it('a rolled-back mirror write announces nothing and records nothing', async () => {
    await watch({ clientId: clientA, maxPriceMinor: 500n });
    const c = await pool.connect();
    try {
      await listings.prepareSeen(c);
      await c.query('BEGIN');
      expect(await listings.upsertPage(c, [row(EVENT, 1n, 100n)], next(), '1')).toBe(1);
      // The match, and the listing itself in the client's feed: a watch subscribes its client to its event.
      const inside = await c.query<{ type: string }>(`SELECT type FROM outbox_events ORDER BY type`);
      expect(inside.rows.map((r) => r.type)).toEqual(['listing.listed', 'watch.matched']);
      await c.query('ROLLBACK');
    } finally {
      c.release();
    }
    expect(await reasons()).toEqual([]);
    expect((await dataSource.query(`SELECT count(*)::int AS n FROM watch_alerts`))[0].n).toBe(0);
    await writePage([row(EVENT, 1n, 100n)]); // the same change committed later is announced, once
    expect(await reasons()).toEqual(['1@100:listed_under_max']);
  });

  it('two writers committing the same change concurrently announce it once (the second write is a no-op)', async () => {
    await watch({ clientId: clientA, maxPriceMinor: 500n });
    const at = next();
    const [c1, c2] = [await pool.connect(), await pool.connect()];
    try {
      for (const c of [c1, c2]) {
        await listings.prepareSeen(c);
        await c.query('BEGIN');
      }
      expect(await listings.upsertPage(c1, [row(EVENT, 1n, 100n)], at, '1')).toBe(1);
      // The second writer's insert waits on the first's row until it commits, then finds the same content
      // there: its rewrite (if any) changes no price and makes no listing active, so it matches nothing.
      const second = listings.upsertPage(c2, [row(EVENT, 1n, 100n)], at, '2');
      await c1.query('COMMIT');
      await second;
      await c2.query('COMMIT');
    } finally {
      c1.release();
      c2.release();
    }
    expect(await reasons()).toEqual(['1@100:listed_under_max']);
  });

  it('a live observation (checkout, selling) matches like a pass: a drop seen by applyLiveListing', async () => {
    await writePage([row(EVENT, 1n, 1000n)]);
    await watch({ clientId: clientA, minDropPercent: 20 });
    const live = (price: bigint) => ({
      eventId: EVENT,
      ticketId: 1n,
      live: { eventId: EVENT, ticketId: 1n, askPriceMinor: price, raw: { seller: 'S1' } },
      observedAt: next(),
    });
    expect((await mirror.applyLiveListing(live(800n))).changed).toBe(true);
    expect((await mirror.applyLiveListing(live(800n))).changed).toBe(false);
    expect(await reasons()).toEqual(['1@800:price_drop']);
  });

  it('a cooldown: one alert per watch per window, the cheapest of a batch', async () => {
    const w = await watch({ clientId: clientA, maxPriceMinor: 500n, cooldownSeconds: 3600 });
    await writePage([row(EVENT, 1n, 300n), row(EVENT, 2n, 200n), row(EVENT, 3n, 400n)]);
    expect(await reasons()).toEqual(['2@200:listed_under_max']);
    await writePage([row(EVENT, 4n, 100n)]);
    expect(await reasons()).toHaveLength(1);
    await dataSource.query(`UPDATE watches SET last_alerted_at = now() - interval '2 hours' WHERE id = $1`, [
      w.id,
    ]);
    await writePage([row(EVENT, 5n, 150n)]);
    expect(await reasons()).toEqual(['2@200:listed_under_max', '5@150:listed_under_max']);
  });

  it('a backfill (catalog events quiet) still matches the watches, as before its inserts were collected', async () => {
    await watch({ clientId: clientA, maxPriceMinor: 500n });
    const c = await pool.connect();
    try {
      await listings.prepareSeen(c);
      await c.query('BEGIN');
      await c.query(`SELECT set_config('bff.catalog_backfill', 'on', true)`);
      await listings.upsertPage(c, [row(EVENT, 1n, 300n), row(EVENT, 2n, 600n)], next(), '1');
      await listings.upsertPage(c, [row(EVENT, 3n, 400n)], next(), '1');
      await c.query('COMMIT');
    } finally {
      c.release();
    }
    expect(await reasons()).toEqual(['1@300:listed_under_max', '3@400:listed_under_max']);
  });

  it("a batch's matches: in (event, ticket, watch) feed order, one JSON per listing, delivered by each endpoint's filter", async () => {
    // One statement announces the batch (outbox_append_set, migrations/…-WatchMatchSetBased.ts): the same feed
    // order, payloads and fan-out as one outbox_append per match.
    const endpoint = async (clientId: string, types: string[], enabled = true): Promise<string> => {
      const [created] = await dataSource.query<{ id: string }[]>(
        `INSERT INTO webhook_endpoints (client_id, url, event_types, secret, enabled)
         VALUES ($1, 'https://hooks.example.com/', $2::text[], '\\x00', $3) RETURNING id::text AS id`,
        [clientId, types, enabled],
      );
      return created?.id ?? '';
    };
    const every = await endpoint(clientA, []);
    const named = await endpoint(clientA, ['watch.matched']);
    await endpoint(clientA, ['listing.listed']);
    await endpoint(clientA, [], false);
    await endpoint(clientB, []);
    const w1 = await watch({ clientId: clientA, maxPriceMinor: 500n, subject: 'bob' });
    const w2 = await watch({ clientId: clientA, maxPriceMinor: 900n });
    await writePage([row(EVENT, 2n, 400n), row(EVENT, 1n, 300n), row(EVENT, 3n, 800n)]);
    const [first, second] = [w1.id, w2.id].toSorted();
    const found = await matches();
    expect(found.map((m) => `${m.listing.ticket_id}:${m.watch_id}`)).toEqual([
      `1:${first}`,
      `1:${second}`,
      `2:${first}`,
      `2:${second}`,
      `3:${w2.id}`,
    ]);
    expect(found.find((m) => m.watch_id === w1.id)?.subject).toBe('bob');
    expect(found.find((m) => m.watch_id === w2.id)?.subject).toBeNull();
    expect(new Set(found.map((m) => JSON.stringify(m.listing))).size).toBe(3);
    const deliveries = await dataSource.query<{ endpoint_id: string; n: number }[]>(
      `SELECT d.endpoint_id::text, count(*)::int AS n FROM webhook_deliveries d
       JOIN outbox_events e ON e.id = d.event_id WHERE e.type = 'watch.matched'
       GROUP BY d.endpoint_id ORDER BY d.endpoint_id`,
    );
    expect(deliveries).toEqual(
      [
        { endpoint_id: every, n: 5 },
        { endpoint_id: named, n: 5 },
      ].toSorted((a, b) => a.endpoint_id.localeCompare(b.endpoint_id)),
    );
    await dataSource.query(`DELETE FROM webhook_endpoints`);
  });

  it("last_alerted_at: read from the watch's alerts; the watch row is written only for a cooldown", async () => {
    // migrations/…-WatchMatchCooldownOnlyTouch.ts: the column is the cooldown's state, kept for cooldown watches only.
    const plain = await watch({ clientId: clientA, maxPriceMinor: 500n });
    const cooled = await watch({ clientId: clientA, maxPriceMinor: 500n, cooldownSeconds: 60 });
    expect((await watches.get(clientA, plain.id))?.last_alerted_at).toBeNull();
    await writePage([row(EVENT, 1n, 300n)]);
    const column = async (id: string): Promise<Date | null> =>
      (
        await dataSource.query<{ at: Date | null }[]>(
          `SELECT last_alerted_at AS at FROM watches WHERE id = $1`,
          [id],
        )
      )[0]?.at ?? null;
    const [alert] = await dataSource.query<{ at: Date }[]>(
      `SELECT alerted_at AS at FROM watch_alerts WHERE watch_id = $1`,
      [plain.id],
    );
    expect(alert).toBeDefined();
    expect(await column(plain.id)).toBeNull();
    expect(await column(cooled.id)).toEqual(alert?.at);
    expect((await watches.get(clientA, plain.id))?.last_alerted_at).toEqual(alert?.at);
    expect((await watches.get(clientA, cooled.id))?.last_alerted_at).toEqual(alert?.at);
    // A later alert is the one shown (the latest of the watch's alerts).
    await writePage([row(EVENT, 2n, 200n)]);
    const shown = (await watches.page(clientA, 10, null, {})).find((w) => w.id === plain.id)?.last_alerted_at;
    expect(shown?.getTime()).toBeGreaterThan(alert?.at.getTime() ?? Infinity);
    expect(await column(plain.id)).toBeNull();
  });

  it("deleting a watch deletes its alerts (a statement trigger, not a foreign key's cascade)", async () => {
    const kept = await watch({ clientId: clientA, maxPriceMinor: 500n });
    const gone = await watch({ clientId: clientA, maxPriceMinor: 500n });
    const third = await watch({ clientId: clientB, maxPriceMinor: 500n });
    await writePage([row(EVENT, 1n, 300n), row(EVENT, 2n, 400n)]);
    const alerts = async (): Promise<Record<string, number>> =>
      Object.fromEntries(
        (
          await dataSource.query<{ id: string; n: number }[]>(
            `SELECT watch_id::text AS id, count(*)::int AS n FROM watch_alerts GROUP BY watch_id`,
          )
        ).map((r) => [r.id, r.n]),
      );
    expect(await alerts()).toEqual({ [kept.id]: 2, [gone.id]: 2, [third.id]: 2 });
    expect(await watches.delete(clientA, gone.id)).toBe(true);
    expect(await alerts()).toEqual({ [kept.id]: 2, [third.id]: 2 });
    await dataSource.query(`DELETE FROM watches WHERE client_id = $1`, [clientB]);
    expect(await alerts()).toEqual({ [kept.id]: 2 });
    await dataSource.query(`TRUNCATE watches`);
    expect(await alerts()).toEqual({});
  });

  it('without any watch, mirror writes announce nothing', async () => {
    await writePage([row(EVENT, 1n, 1n), row(EVENT, 2n, 2n)]);
    await writePage([row(EVENT, 1n, 0n)]);
    expect(await reasons()).toEqual([]);
  });
});
