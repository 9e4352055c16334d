import { Pool, type PoolClient } from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { mapListing, type ListingRow } from '../../src/catalog-sync/catalog-sync.mapper';
import { EventRepository } from '../../src/catalog-sync/event.repository';
import { ListingRepository } from '../../src/catalog-sync/listing.repository';
import { MirrorGenerationRepository } from '../../src/catalog-sync/mirror-generation.repository';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

const at = (s: number): Date => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

function listing(eventId: bigint, ticketId: bigint, price: bigint): ListingRow {
  const mapped = mapListing({ eventId, ticketId, askPriceMinor: price, raw: { seller: 'S1' } });
  if (!mapped.ok) throw new Error('unmappable fixture');
  return mapped.row;
}

function ev(id: bigint, name: string) {
  return {
    eventId: id,
    name,
    startAtRaw: '2027-01-01T00:00:00Z',
    startAt: new Date('2027-01-01T00:00:00Z'),
    raw: JSON.stringify({ event_id: id.toString(), name }),
  };
}

interface Announced {
  type: string;
  client_id: string | null;
  payload: Record<string, unknown>;
  endpoints: string[];
}

/** Announced events as [type, client, event, endpoints], by event then type (a statement's order is not promised). */
const byEvent = (got: Announced[]) =>
  got
    .map((e) => [e.type, e.client_id, e.payload.event_id, e.endpoints])
    .sort((a, b) => `${String(a[2])}${String(a[0])}`.localeCompare(`${String(b[2])}${String(b[0])}`));

/**
 * Catalog change events (issue 32 items 1–2, migrations/…-CreateCatalogEvents.ts): the statement triggers on the
 * mirror's tables, through the repositories that write them, against real PostgreSQL.
 */
describe('catalog events (real PostgreSQL)', () => {
  const adminUrl = inject('databaseAdminUrl');
  let url: string;
  let pool: Pool;
  let db: PoolClient;
  const listings = new ListingRepository();
  const events = new EventRepository();
  let generation: MirrorGenerationRepository;
  let clientA: string;
  let clientB: string;
  let admin: string;

  const insertClient = async (prefix: string, scope: string): Promise<string> => {
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO api_clients (name, key_prefix, key_hash, scopes)
       VALUES ('t', $1::text, sha256(convert_to($1::text, 'UTF8')), ARRAY[$2]) RETURNING id`,
      [prefix, scope],
    );
    return rows[0].id;
  };
  const endpoint = async (
    clientId: string,
    filters: { eventTypes?: string[]; eventIds?: string[]; operator?: boolean } = {},
  ): Promise<string> => {
    const { rows } = await pool.query<{ id: string }>(
      `INSERT INTO webhook_endpoints (client_id, url, event_types, event_ids, operator_events, secret)
       VALUES ($1, 'https://hooks.example.com/', $2::text[], $3::numeric[], $4, '\\x00') RETURNING id::text`,
      [clientId, filters.eventTypes ?? [], filters.eventIds ?? [], filters.operator ?? false],
    );
    return rows[0].id;
  };
  /** Every event announced so far (oldest first) with the endpoints it was fanned out to. */
  const announced = async (): Promise<Announced[]> =>
    (
      await pool.query<Announced>(
        `SELECT o.type, o.client_id::text, o.payload,
           coalesce((SELECT array_agg(d.endpoint_id::text ORDER BY d.endpoint_id) FROM webhook_deliveries d
                     WHERE d.event_id = o.id), '{}') AS endpoints
         FROM outbox_events o ORDER BY o.xact_id, o.position`,
      )
    ).rows;

  beforeAll(async () => {
    url = await createDatabaseFromTemplate(adminUrl);
    pool = new Pool({ connectionString: url, max: 4 });
    db = await pool.connect();
    generation = new MirrorGenerationRepository(pool);
    clientA = await insertClient('trb_live_catalog000001', 'listings:read');
    clientB = await insertClient('trb_live_catalog000002', 'listings:read');
    admin = await insertClient('trb_live_catalog000003', 'admin');
  });
  afterAll(async () => {
    db?.release();
    await pool?.end();
    await dropDatabase(adminUrl, url);
  });
  beforeEach(async () => {
    await db.query(
      'TRUNCATE listings, events, outbox_events, webhook_deliveries, webhook_endpoints, protocol_config, watches',
    );
    await listings.prepareSeen(db);
    await events.prepareSeen(db);
  });

  it('no subscriber: the writes announce nothing (existing endpoints with every type are not flooded)', async () => {
    await endpoint(clientA);
    await endpoint(admin, { operator: true });
    await listings.upsertPage(db, [listing(1n, 1n, 100n), listing(1n, 2n, 200n)], at(1), '1');
    await listings.upsertPage(db, [listing(1n, 1n, 90n)], at(2), '2');
    await events.upsertPage(db, [ev(1n, 'Show')], at(1), '1');
    expect(await listings.sweep(db, at(3), '3', 1n)).toBe(2);
    expect(await announced()).toEqual([]);
  });

  it('each kind once per change, to the subscribed client only, at its subscribed endpoints only', async () => {
    await db.query(
      `INSERT INTO protocol_config (stablecoin_decimals, raw, fetched_at) VALUES (6, '{}', now())`,
    );
    const subscribed = await endpoint(clientA, { eventIds: ['7'] });
    await endpoint(clientA); // every type, no event_ids: no catalog event
    await endpoint(clientA, { eventIds: ['8'] });
    await endpoint(clientB); // another client, no subscription
    await endpoint(admin, { operator: true });

    await listings.upsertPage(
      db,
      [listing(7n, 1n, 1_500_000n), listing(8n, 9n, 1n), listing(9n, 1n, 1n)],
      at(1),
      '1',
    );
    await listings.upsertPage(db, [listing(7n, 1n, 1_500_000n)], at(2), '2'); // unchanged: nothing
    await listings.upsertPage(db, [listing(7n, 1n, 1_250_000n)], at(3), '3');
    await listings.upsertPage(db, [listing(7n, 1n, 9n)], at(2), '4'); // older than the row: not written
    await listings.prepareSeen(db);
    expect(await listings.sweep(db, at(5), '5', 7n)).toBe(1);
    await listings.upsertPage(db, [listing(7n, 1n, 1_000_000n)], at(6), '6'); // listed again

    const mine = (await announced()).filter((e) => e.payload.event_id === '7');
    expect(mine.map((e) => [e.type, e.client_id, e.endpoints])).toEqual([
      ['listing.listed', clientA, [subscribed]],
      ['listing.price_changed', clientA, [subscribed]],
      ['listing.removed', clientA, [subscribed]],
      ['listing.listed', clientA, [subscribed]],
    ]);
    expect(mine[0].payload).toEqual({
      event_id: '7',
      ticket_id: '1',
      price_minor: '1500000',
      price: { minor: '1500000', amount: '1.5', decimals: 6 },
      expires_at: null,
    });
    expect(mine[1].payload).toEqual({
      event_id: '7',
      ticket_id: '1',
      previous_price_minor: '1500000',
      price_minor: '1250000',
      previous_price: { minor: '1500000', amount: '1.5', decimals: 6 },
      price: { minor: '1250000', amount: '1.25', decimals: 6 },
    });
    expect(mine[2].payload).toMatchObject({
      ticket_id: '1',
      reason: 'gone_upstream',
      price_minor: '1250000',
    });
    // Event 8 reaches client A's endpoint for 8; event 9 nobody; client B nothing at all.
    const all = await announced();
    expect(all.filter((e) => e.payload.event_id === '8').map((e) => e.type)).toEqual(['listing.listed']);
    expect(all.filter((e) => e.payload.event_id === '9')).toEqual([]);
    expect(all.filter((e) => e.client_id !== clientA)).toEqual([]);
  });

  it('an endpoint without event_ids takes the catalog types its event_types names, of every event', async () => {
    const all = await endpoint(clientB, { eventTypes: ['listing.removed'] });
    await listings.upsertPage(db, [listing(3n, 1n, 5n), listing(4n, 1n, 5n)], at(1), '1');
    await listings.prepareSeen(db);
    expect(await listings.sweep(db, at(2), '2', null)).toBe(2);
    const got = await announced();
    expect(got.map((e) => [e.type, e.client_id, e.endpoints, e.payload.event_id])).toEqual([
      ['listing.removed', clientB, [all], '3'],
      ['listing.removed', clientB, [all], '4'],
    ]);
  });

  it('a rolled-back write announces nothing; a transaction-local backfill announces nothing either', async () => {
    await endpoint(clientA, { eventIds: ['5'] });
    await db.query('BEGIN');
    await listings.upsertPage(db, [listing(5n, 1n, 10n)], at(1), '1');
    expect((await db.query(`SELECT count(*)::int AS n FROM outbox_events`)).rows[0].n).toBe(1);
    await db.query('ROLLBACK');
    expect(await announced()).toEqual([]);

    await db.query('BEGIN');
    await generation.quietCatalog(db);
    await listings.upsertPage(db, [listing(5n, 1n, 10n)], at(2), '2');
    await db.query('COMMIT');
    expect(await announced()).toEqual([]);
    // The setting was the transaction's own: the next write announces again.
    await listings.upsertPage(db, [listing(5n, 1n, 11n)], at(3), '3');
    expect((await announced()).map((e) => e.type)).toEqual(['listing.price_changed']);
  });

  it('inserts: several statements of one transaction each announce their own rows once; nothing captures them', async () => {
    await endpoint(clientA, { eventIds: ['4'] });
    await db.query('BEGIN');
    await listings.upsertPage(db, [listing(4n, 1n, 10n)], at(1), '1');
    await listings.upsertPage(db, [listing(4n, 2n, 20n), listing(4n, 3n, 30n)], at(1), '1');
    // A removed row inserted (a live observation of a removal never stored as active) announces nothing.
    await db.query(
      `INSERT INTO listings (event_id, ticket_id, ask_price_minor, raw, first_seen_at, last_seen_at, removed_at,
         observed_at) VALUES (4, 4, 40, '{}', now(), now(), now(), now())`,
    );
    await db.query('COMMIT');
    expect((await announced()).map((e) => `${e.type}:${String(e.payload.ticket_id)}`)).toEqual([
      'listing.listed:1',
      'listing.listed:2',
      'listing.listed:3',
    ]);
    // A backfill's inserts must not be copied into a transition table: no INSERT trigger on listings declares one.
    const { rows } = await pool.query<{ tgname: string }>(
      `SELECT tgname FROM pg_trigger WHERE tgrelid = 'listings'::regclass AND NOT tgisinternal
         AND tgnewtable IS NOT NULL AND (tgtype & 4) <> 0`,
    );
    expect(rows).toEqual([]);
  });

  it('two replicas writing the same change (concurrently, or one after the other) announce it once', async () => {
    await endpoint(clientA, { eventIds: ['6'] });
    await listings.upsertPage(db, [listing(6n, 1n, 100n)], at(1), '1');
    const other = await pool.connect();
    try {
      await listings.prepareSeen(other);
      // Both transactions read the row before either commits; the second waits on the first's row lock.
      await db.query('BEGIN');
      await other.query('BEGIN');
      await listings.upsertPage(db, [listing(6n, 1n, 80n)], at(2), '2');
      const second = listings.upsertPage(other, [listing(6n, 1n, 80n)], at(3), '3');
      await new Promise((resolve) => setTimeout(resolve, 100));
      await db.query('COMMIT');
      await second;
      await other.query('COMMIT');
      // Then a third replica, later still, with the same content: the content check makes it a no-op.
      expect(await listings.upsertPage(other, [listing(6n, 1n, 80n)], at(4), '4')).toBe(0);
      await listings.dropSeen(other);
    } finally {
      other.release();
    }
    expect((await announced()).map((e) => [e.type, e.payload.price_minor])).toEqual([
      ['listing.listed', '100'],
      ['listing.price_changed', '80'],
    ]);
  });

  it('events: listed, updated, removed, listed again', async () => {
    const hook = await endpoint(clientA, {
      eventIds: ['11'],
      eventTypes: ['event.listed', 'event.updated', 'event.removed'],
    });
    await events.upsertPage(db, [ev(11n, 'Show'), ev(12n, 'Other')], at(1), '1');
    await events.upsertPage(db, [ev(11n, 'Show')], at(2), '2');
    await events.upsertPage(db, [ev(11n, 'Show (late)')], at(3), '3');
    await events.prepareSeen(db);
    await events.upsertPage(db, [ev(12n, 'Other')], at(4), '4');
    expect(await events.sweep(db, at(4), '4')).toBe(1);
    await events.upsertPage(db, [ev(11n, 'Show (late)')], at(5), '5');
    const got = await announced();
    expect(got.map((e) => [e.type, e.endpoints])).toEqual([
      ['event.listed', [hook]],
      ['event.updated', [hook]],
      ['event.removed', [hook]],
      ['event.listed', [hook]],
    ]);
    expect(got[1].payload).toEqual({
      event_id: '11',
      name: 'Show (late)',
      start_at: '2027-01-01T00:00:00Z',
      previous_name: 'Show',
      previous_start_at: '2027-01-01T00:00:00Z',
    });
    expect(got[2].payload).toEqual({ event_id: '11', name: 'Show (late)' });
  });

  it("a watch subscribes its client's feed, not its endpoints, to its event's catalog events while it is unexpired", async () => {
    await endpoint(clientA); // the default filters: no catalog event, so each of A's rows below has no delivery
    const following = await endpoint(clientB, { eventIds: ['22'] });
    const watch = async (clientId: string, eventId: number, expired = false): Promise<void> => {
      await pool.query(
        `INSERT INTO watches (client_id, event_id, max_price_minor, expires_at)
         VALUES ($1, $2, 1, CASE WHEN $3 THEN now() - interval '1 second' END)`,
        [clientId, eventId, expired],
      );
    };
    await watch(clientA, 21);
    await watch(clientA, 21); // two watches of one client on one event: one event in its feed
    await watch(clientB, 21, true); // expired: subscribes nothing
    await listings.upsertPage(
      db,
      [listing(21n, 1n, 100n), listing(22n, 1n, 100n), listing(23n, 1n, 100n)],
      at(1),
      '1',
    );
    await events.upsertPage(db, [ev(21n, 'Watched'), ev(23n, 'Nobody')], at(1), '1');
    expect(byEvent(await announced())).toEqual([
      ['event.listed', clientA, '21', []],
      ['listing.listed', clientA, '21', []],
      ['listing.listed', clientB, '22', [following]],
    ]);

    // A backfill's end tells the watching client too; the expired watch's client only by its endpoint.
    await generation.fullPassCompleted(db, 'listings', {
      passId: '21',
      resource: 'listings',
      reason: 'empty_mirror',
      items: 3,
      upserted: 3,
      removed: 0,
    });
    const told = (await announced())
      .filter((e) => e.type === 'sync.backfill_completed')
      .map((e) => e.client_id);
    expect(told).toHaveLength(3);
    expect(new Set(told)).toEqual(new Set([null, clientA, clientB]));
    await db.query(`UPDATE mirror_generation SET listings_epoch = NULL, events_epoch = NULL`);

    // Once the watches are gone, the client's feed takes no more of the event's changes.
    await pool.query(`DELETE FROM watches WHERE client_id = $1`, [clientA]);
    await db.query('TRUNCATE outbox_events');
    await listings.upsertPage(db, [listing(21n, 1n, 90n)], at(2), '2');
    expect(await announced()).toEqual([]);
  });

  it('backfill: empty mirror or another epoch; its end announces one sync.backfill_completed', async () => {
    await endpoint(clientA, { eventIds: ['1'] });
    await endpoint(clientB); // no catalog subscription: not told
    await endpoint(admin, { operator: true });
    expect(await generation.backfillReason(db, 'listings')).toBe('empty_mirror');
    await listings.upsertPage(db, [listing(2n, 1n, 1n)], at(1), '1');
    expect(await generation.backfillReason(db, 'listings')).toBe('epoch_changed');
    await generation.fullPassCompleted(db, 'listings', {
      passId: '9',
      resource: 'listings',
      reason: 'epoch_changed',
      items: 1,
      upserted: 1,
      removed: 0,
    });
    expect(await generation.backfillReason(db, 'listings')).toBeNull();
    expect(await generation.backfillReason(db, 'events')).toBe('empty_mirror');
    const got = await announced();
    expect(got.map((e) => [e.type, e.client_id])).toEqual([
      ['sync.backfill_completed', null],
      ['sync.backfill_completed', clientA],
    ]);
    expect(got[1].payload).toEqual({
      pass_id: '9',
      resource: 'listings',
      reason: 'epoch_changed',
      items: 1,
      upserted: 1,
      removed: 0,
    });
    await db.query(`UPDATE mirror_generation SET listings_epoch = NULL, events_epoch = NULL`);
  });
});
