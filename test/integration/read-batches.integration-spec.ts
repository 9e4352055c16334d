import { DataSource } from 'typeorm';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { CatalogMirrorRepository } from '../../src/catalog-sync/catalog-mirror.repository';
import type { EventRow, ListingsQuery } from '../../src/catalog-sync/catalog-mirror.types';
import { buildDataSourceOptions, pgPool } from '../../src/database/data-source';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

/**
 * The read paths that beat the plain query (docs/read-api.md, SQL): one event's listing pages of one turn read
 * in one statement (listingsPages), and a name search's first page walked in start order for a dense term
 * (name-search-plan.ts). Each must return exactly what the plain statement returns.
 */
describe('read batches and name-search plans (real PostgreSQL)', () => {
  const adminUrl = inject('databaseAdminUrl');
  let url: string;
  let ds: DataSource;
  let sut: CatalogMirrorRepository;
  const sent: string[] = [];

  beforeAll(async () => {
    url = await createDatabaseFromTemplate(adminUrl);
    ds = new DataSource(buildDataSourceOptions({ url }));
    await ds.initialize();
    const pool = pgPool(ds);
    type Statement = string | { text: string };
    const query = pool.query.bind(pool) as (statement: Statement, values?: unknown[]) => Promise<unknown>;
    (pool as unknown as { query: typeof query }).query = (statement, values) => {
      sent.push(typeof statement === 'string' ? statement : statement.text);
      return query(statement, values);
    };
    sut = new CatalogMirrorRepository(ds, pool);
    // 3,000 events: every 5th a "Gala" (dense), event 2,999 alone a "Zither" (sparse), "Late" only among the last
    // 40 in start order (dense overall but beyond the walk), every 100th undated, every 10th removed.
    await ds.query(
      `INSERT INTO events (event_id, name, start_at_raw, start_at, raw, first_seen_at, last_seen_at, observed_at, removed_at)
       SELECT e, 'Event ' || e || CASE WHEN e % 5 = 0 THEN ' Gala' ELSE '' END
           || CASE WHEN e = 2999 THEN ' Zither' ELSE '' END || CASE WHEN e > 2960 THEN ' Late' ELSE '' END,
         'x', CASE WHEN e % 100 <> 0 THEN timestamptz '2027-01-01' + e * interval '1 hour' END, '{}', now(), now(), now(),
         CASE WHEN e % 10 = 1 THEN now() END
       FROM generate_series(1, 3000) e`,
    );
    await ds.query(
      `INSERT INTO listings (event_id, ticket_id, ask_price_minor, raw, first_seen_at, last_seen_at, observed_at, removed_at)
       SELECT e, t, (t * 7919) % 1000, jsonb_build_object('seller', 'S' || t), timestamptz '2026-01-01' + t * interval '1 second',
         now(), now(), CASE WHEN t % 10 = 0 THEN now() END
       FROM generate_series(1, 3) e, generate_series(1, 400) t`,
    );
    await ds.query('ANALYZE events');
    await ds.query('ANALYZE listings');
  });
  afterAll(async () => {
    await ds?.destroy();
    await dropDatabase(adminUrl, url);
  });

  const sorts = ['price_asc', 'price_desc', 'newest'] as const;
  const key = (sort: (typeof sorts)[number]): string =>
    sort === 'newest' ? '2026-01-01T00:03:20.000000Z' : '500';

  it.each(sorts)('reads several pages (%s) in one statement: the same rows as one by one', async (sort) => {
    for (const shape of [
      {},
      { after: [key(sort), '0', '200'] as const },
      { minPrice: '100', maxPrice: '900' },
    ]) {
      const queries: ListingsQuery[] = [
        { sort, eventId: '1', limit: 20, ...shape },
        { sort, eventId: '2', limit: 5, ...shape },
        { sort, eventId: '1', limit: 100, ...shape },
        { sort, eventId: '9', limit: 20, ...shape },
      ].map((q) => ('after' in q && q.after ? { ...q, after: [q.after[0], q.eventId, q.after[2]] } : q));
      const oneByOne = await Promise.all(queries.map((q) => sut.listingsPage(q)));
      sent.length = 0;
      const together = await sut.listingsPages(queries);
      expect(sent).toHaveLength(1);
      expect(together).toEqual(oneByOne);
      expect(together.map((rows) => rows.length)).toEqual(oneByOne.map((rows) => rows.length));
      expect(oneByOne[0]?.length).toBeGreaterThan(0);
      expect(oneByOne[3]).toEqual([]);
    }
  });

  it('plans a batch as one index range scan per page in a nested loop: no sort, no sequential scan', async () => {
    const queries: ListingsQuery[] = [
      { sort: 'price_asc', eventId: '1', limit: 20, after: ['500', '1', '200'] },
      { sort: 'price_asc', eventId: '2', limit: 20, after: ['300', '2', '100'] },
    ];
    sent.length = 0;
    await sut.listingsPages(queries);
    const text = sent[0] ?? '';
    const values = [
      ['1', '2'],
      ['500', '300'],
      ['200', '100'],
      ['21', '21'],
    ];
    const plan = (await ds.query<{ 'QUERY PLAN': string }[]>(`EXPLAIN ${text}`, values))
      .map((r) => r['QUERY PLAN'])
      .join('\n');
    expect(plan).toContain('Nested Loop');
    expect(plan).toMatch(/Index Scan using listings_event_price_idx/);
    expect(plan).not.toMatch(/Sort|Seq Scan/);
  });

  it('refuses pages of different shapes or across events in one statement', async () => {
    await expect(
      sut.listingsPages([
        { sort: 'price_asc', eventId: '1', limit: 20 },
        { sort: 'newest', eventId: '1', limit: 20 },
      ]),
    ).rejects.toThrow(/same shape/);
    await expect(
      sut.listingsPages([
        { sort: 'price_asc', limit: 20 },
        { sort: 'price_asc', limit: 20 },
      ]),
    ).rejects.toThrow(/same shape/);
  });

  /** The exact first page of a name search, computed without the index: every active match in page order. */
  async function expectedSearch(term: string, limit: number): Promise<string[]> {
    const rows = await ds.query<{ event_id: string }[]>(
      `SELECT event_id::text AS event_id FROM events WHERE removed_at IS NULL AND strpos(lower(name), $1) > 0
       ORDER BY start_at ASC NULLS LAST, event_id LIMIT $2`,
      [term, limit + 1],
    );
    return rows.map((r) => r.event_id);
  }

  it.each([
    ['gala', 20],
    ['gala', 100],
    ['zither', 20],
    ['late', 20],
    ['event 29', 20],
    ['nothing like it', 20],
    ['event', 1],
  ])(
    'answers a name search (%s, limit %i) exactly, whichever plan it learned, on every search',
    async (term, limit) => {
      for (let i = 0; i < 70; i++) {
        sent.length = 0;
        const rows: EventRow[] = await sut.eventsPage({ nameContains: term, limit });
        expect(rows.map((r) => r.event_id)).toEqual(await expectedSearch(term, limit));
        expect(sent).toHaveLength(1);
      }
    },
  );

  it('walks the start-time index for a dense term and uses the trigram index for a sparse one', async () => {
    await sut.eventsPage({ nameContains: 'gala', limit: 20 });
    sent.length = 0;
    await sut.eventsPage({ nameContains: 'gala', limit: 20 });
    expect(sent[0]).toMatch(/WITH walk AS/);
    await sut.eventsPage({ nameContains: 'zither', limit: 20 });
    sent.length = 0;
    await sut.eventsPage({ nameContains: 'zither', limit: 20 });
    expect(sent[0]).not.toMatch(/WITH walk AS/);
  });
});
