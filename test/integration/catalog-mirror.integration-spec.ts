import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CatalogMirrorRepository } from '../../src/catalog-sync/catalog-mirror.repository';
import type { ListingsQuery } from '../../src/catalog-sync/catalog-mirror.types';
import { MIRROR_GENERATION_CHANNEL } from '../../src/catalog-sync/mirror-generation.repository';
import { PgListener } from '../../src/database/pg-listener';
import { buildDataSourceOptions } from '../../src/database/data-source';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';
import { pgPool } from '../../src/database/data-source';

describe(`${CatalogMirrorRepository.name} (real PostgreSQL)`, () => {
  const adminUrl = inject('databaseAdminUrl');
  let url: string;
  let ds: DataSource;
  let sut: CatalogMirrorRepository;
  /** Every statement the repository sent, for EXPLAIN. */
  const sent: { text: string; values: unknown[] }[] = [];

  beforeAll(async () => {
    url = await createDatabaseFromTemplate(adminUrl);
    ds = new DataSource(buildDataSourceOptions({ url }));
    await ds.initialize();
    const pool = (ds.driver as unknown as { master: Pool }).master;
    type Statement = string | { text: string; values?: unknown[] };
    const query = pool.query.bind(pool) as (statement: Statement, values?: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: typeof query }).query = (statement, values) => {
      // Plain (text, values) or a named prepared statement ({ name, text, values }).
      if (typeof statement === 'string') sent.push({ text: statement, values: values ?? [] });
      else sent.push({ text: statement.text, values: statement.values ?? [] });
      return query(statement, values);
    };
    sut = new CatalogMirrorRepository(ds, pgPool(ds));
    // 4000 events, 40 of them × 500 listings, 10% removed: enough rows that the planner prefers the indexes.
    await ds.query(
      `INSERT INTO events (event_id, name, start_at_raw, start_at, raw, first_seen_at, last_seen_at, observed_at, removed_at)
       SELECT e, 'Event ' || e, 'x', timestamptz '2027-01-01' + e * interval '1 hour', '{}', now(), now(), now(),
         CASE WHEN e % 10 = 0 THEN now() END
       FROM generate_series(1, 4000) e`,
    );
    await ds.query(
      `INSERT INTO listings (event_id, ticket_id, ask_price_minor, raw, first_seen_at, last_seen_at, observed_at, removed_at)
       SELECT e, t, (t * 7919) % 1000, '{}', timestamptz '2026-01-01' + t * interval '1 second', now(), now(),
         CASE WHEN t % 10 = 0 THEN now() END
       FROM generate_series(1, 40) e, generate_series(1, 500) t`,
    );
    await ds.query('ANALYZE events');
    await ds.query('ANALYZE listings');
  });
  afterAll(async () => {
    await ds?.destroy();
    await dropDatabase(adminUrl, url);
  });

  async function plan(run: () => Promise<unknown>): Promise<string> {
    sent.length = 0;
    await run();
    const statement = sent.at(-1);
    if (!statement) throw new Error('no statement sent');
    const rows = await ds.query<{ 'QUERY PLAN': string }[]>(`EXPLAIN ${statement.text}`, statement.values);
    return rows.map((r) => r['QUERY PLAN']).join('\n');
  }

  const sorts = ['price_asc', 'price_desc', 'newest'] as const;
  const queries: [string, ListingsQuery][] = sorts.flatMap((sort) => [
    [`${sort}, all events, first page`, { sort, limit: 20 }],
    [`${sort}, all events, after a position`, { sort, limit: 20, after: positionFor(sort, '7') }],
    [
      `${sort}, one event, after a position`,
      { sort, limit: 20, eventId: '7', after: positionFor(sort, '7') },
    ],
    [`${sort}, one event, price range`, { sort, limit: 20, eventId: '7', minPrice: '100', maxPrice: '900' }],
  ]);

  function positionFor(sort: (typeof sorts)[number], eventId: string): [string, string, string] {
    return sort === 'newest' ? ['2026-01-01T00:03:20.000000Z', eventId, '200'] : ['500', eventId, '200'];
  }

  it.each(queries)('pages listings (%s) by an index range scan: no sort, no offset', async (_name, query) => {
    const text = await plan(() => sut.listingsPage(query));
    expect(text).toMatch(/Index (Only )?Scan/);
    expect(text).not.toMatch(/\bSort\b|Seq Scan/);
    expect(sent.at(-1)?.text).not.toMatch(/OFFSET/i);
  });

  it('pages events by the (start_at, event_id) index', async () => {
    const text = await plan(() => sut.eventsPage({ limit: 20, after: ['2027-01-01T05:00:00.000000Z', '5'] }));
    expect(text).toMatch(/Index Scan using events_upcoming_idx/);
  });

  it('reads several listings by key in one statement: the same rows as one by one, unknown keys absent', async () => {
    const keys = [
      ['3', '5'],
      ['3', '10'], // removed (t % 10 = 0): still returned, removed_at set
      ['99', '1'], // never mirrored
      ['3', '5'], // asked twice
      ['12', '499'],
    ] as const;
    const rows = await sut.listingsByKey(keys);
    const byKey = new Map(rows.map((r) => [`${r.event_id}/${r.ticket_id}`, r]));
    expect([...byKey.keys()].sort()).toEqual(['12/499', '3/10', '3/5']);
    for (const [e, t] of keys) expect(byKey.get(`${e}/${t}`)).toEqual(await sut.listing(e, t));
    expect(byKey.get('3/10')?.removed_at).not.toBeNull();
    const text = await plan(() => sut.listingsByKey(keys));
    expect(text).toMatch(/Index (Only )?Scan using listings_pkey/);
    expect(text).not.toMatch(/Seq Scan on listings/);
  });

  it('keeps exact keyset positions: microsecond timestamps and u64 prices', async () => {
    const first = await sut.listingsPage({ sort: 'newest', limit: 3, eventId: '3' });
    const next = await sut.listingsPage({
      sort: 'newest',
      limit: 3,
      eventId: '3',
      after: [first[2]?.first_seen_key ?? '', '3', first[2]?.ticket_id ?? ''],
    });
    expect(next[0]?.ticket_id).toBe(first[3]?.ticket_id);
    expect(first.every((r) => r.removed_at === null)).toBe(true);
  });

  it("returns timestamps as Date's ISO text and exact microsecond keys, without parsing them", async () => {
    await ds.query(
      `UPDATE listings SET first_seen_at = '2026-03-04T05:06:07.089012Z', last_seen_at = '2026-03-04T05:06:08Z'
       WHERE event_id = 9 AND ticket_id = 1`,
    );
    await ds.query(`UPDATE events SET start_at = '2027-02-03T04:05:06.7Z' WHERE event_id = 9`);
    const listing = await sut.listing('9', '1');
    expect(listing).toMatchObject({
      first_seen_at: '2026-03-04T05:06:07.089Z',
      first_seen_key: '2026-03-04T05:06:07.089012Z',
      last_seen_at: '2026-03-04T05:06:08.000Z',
      removed_at: null,
    });
    const [stored] = await ds.query<{ last_seen_at: Date }[]>(
      'SELECT last_seen_at FROM events WHERE event_id = 9',
    );
    const event = await sut.event('9');
    expect(event).toMatchObject({
      start_at: '2027-02-03T04:05:06.700Z',
      start_key: '2027-02-03T04:05:06.700000Z',
      last_seen_at: stored?.last_seen_at.toISOString(),
    });
  });

  it('reads the state: generation, last completed passes, protocol config', async () => {
    await ds.query(
      `INSERT INTO sync_passes (resource, status, started_at, finished_at, holder, fencing_token)
       VALUES ('listings', 'completed', '2026-05-01T00:00:00Z', '2026-05-01T00:01:00Z', 't', 1),
              ('listings', 'failed', '2026-06-01T00:00:00Z', '2026-06-01T00:01:00Z', 't', 1)`,
    );
    const state = await sut.state();
    expect(state.generation).toBe('0');
    expect(state.listings_pass?.started_at).toMatch(/^2026-05-01T00:00:00/);
    expect(state.events_pass).toBeNull();
    expect(state.protocol).toBeNull();
  });

  it('applies a live listing: changed rows bump and notify the generation, unchanged or older ones do not', async () => {
    const notified: (string | null)[] = [];
    const listener = new PgListener(ds);
    await listener.listen(MIRROR_GENERATION_CHANNEL, (payload) => notified.push(payload));
    try {
      const live = { eventId: 7n, ticketId: 1n, askPriceMinor: 123n, raw: { event_id: '7', ticket_id: '1' } };
      const later = new Date(Date.now() + 60_000);
      const changed = await sut.applyLiveListing({ eventId: 7n, ticketId: 1n, live, observedAt: later });
      expect(changed.changed).toBe(true);
      await waitUntil(() => notified.includes(changed.generation.toString()), 5000);
      const same = await sut.applyLiveListing({
        eventId: 7n,
        ticketId: 1n,
        live,
        observedAt: new Date(later.getTime() + 1000),
      });
      expect(same).toEqual({ changed: false, generation: changed.generation });
      // An observation older than the stored one never overwrites it.
      const stale = await sut.applyLiveListing({
        eventId: 7n,
        ticketId: 1n,
        live: { ...live, askPriceMinor: 1n },
        observedAt: new Date(0),
      });
      expect(stale.changed).toBe(false);
      const gone = await sut.applyLiveListing({
        eventId: 7n,
        ticketId: 1n,
        live: null,
        observedAt: new Date(later.getTime() + 2000),
      });
      expect(gone.generation).toBe(changed.generation + 1n);
      const row = await sut.listing('7', '1');
      expect(row).toMatchObject({
        ask_price_minor: '123',
        removed_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
    } finally {
      await listener.onModuleDestroy();
    }
  });
});
