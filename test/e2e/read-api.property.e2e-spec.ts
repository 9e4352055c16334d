import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey } from '../support/auth-helpers';
import { MirrorSeeder, type SeedListing } from '../support/read-mirror';
import { startTestApp, type TestApp } from '../support/test-app';

type Sort = 'price_asc' | 'price_desc' | 'newest';

interface Item {
  event_id: string;
  ticket_id: string;
  price: { minor: string };
  first_seen_at: string;
}

const PRICES = ['0', '1', '2', '9007199254740993', '18446744073709551615'];
const SEEN = ['2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z', '2026-03-01T00:00:00.000Z'];
const EVENTS = ['1', '2', '18446744073709551615'];

const listingArb = fc.record({
  eventId: fc.constantFrom(...EVENTS),
  ticketId: fc.bigInt({ min: 0n, max: 30n }).map(String),
  price: fc.constantFrom(...PRICES),
  seen: fc.constantFrom(...SEEN),
  // About one in five listings is already removed.
  removed: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
});

const queryArb = fc
  .record({
    sort: fc.constantFrom<Sort>('price_asc', 'price_desc', 'newest'),
    eventId: fc.option(fc.constantFrom(...EVENTS), { nil: undefined }),
    minPrice: fc.option(fc.constantFrom(...PRICES), { nil: undefined }),
    maxPrice: fc.option(fc.constantFrom(...PRICES), { nil: undefined }),
    limit: fc.integer({ min: 1, max: 6 }),
  })
  // min_price above max_price is a 400 (tested elsewhere): keep the bounds ordered.
  .map((q) =>
    q.minPrice !== undefined && q.maxPrice !== undefined && BigInt(q.minPrice) > BigInt(q.maxPrice)
      ? { ...q, minPrice: q.maxPrice, maxPrice: q.minPrice }
      : q,
  );

type Query = typeof queryArb extends fc.Arbitrary<infer Q> ? Q : never;
type Row = { eventId: string; ticketId: string; price: string; seen: string };

const key = (r: { eventId: string; ticketId: string }): string => `${r.eventId}/${r.ticketId}`;

/** The order the API promises, as a comparator over the test's own rows (the oracle). */
const cmp = (x: bigint, y: bigint): number => (x < y ? -1 : x > y ? 1 : 0);

function compare(sort: Sort, a: Row, b: Row): number {
  const tuple = (r: Row): bigint[] => [
    sort === 'newest' ? BigInt(Date.parse(r.seen)) : BigInt(r.price),
    BigInt(r.eventId),
    BigInt(r.ticketId),
  ];
  const [ta, tb] = [tuple(a), tuple(b)];
  for (let i = 0; i < 3; i++) {
    const c = cmp(ta[i] ?? 0n, tb[i] ?? 0n);
    if (c !== 0) return sort === 'price_asc' ? c : -c;
  }
  return 0;
}

function matches(q: Query, r: Row): boolean {
  const price = BigInt(r.price);
  return (
    (q.eventId === undefined || r.eventId === q.eventId) &&
    (q.minPrice === undefined || price >= BigInt(q.minPrice)) &&
    (q.maxPrice === undefined || price <= BigInt(q.maxPrice))
  );
}

function url(q: Query, cursor: string | null): string {
  const params = new URLSearchParams({ sort: q.sort, limit: String(q.limit) });
  if (q.minPrice !== undefined) params.set('min_price', q.minPrice);
  if (q.maxPrice !== undefined) params.set('max_price', q.maxPrice);
  if (cursor !== null) params.set('cursor', cursor);
  const base = q.eventId === undefined ? '/v1/listings' : `/v1/events/${q.eventId}/listings`;
  return `${base}?${params.toString()}`;
}

function dedupe<T extends { eventId: string; ticketId: string }>(rows: readonly T[]): T[] {
  return [...new Map(rows.map((r) => [key(r), r])).values()];
}

const toSeed = (r: Row & { removed?: boolean }): SeedListing => ({
  eventId: r.eventId,
  ticketId: r.ticketId,
  price: r.price,
  firstSeenAt: new Date(r.seen),
  removed: r.removed,
});

describe('Read API listing walks (property)', () => {
  let t: TestApp;
  let seed: MirrorSeeder;
  let headers: Record<string, string>;

  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_CATALOG_READ: '100000', LISTINGS_CACHE_STRICT: 'true' });
    seed = await MirrorSeeder.connect(t.databaseUrl);
    headers = bearer((await issueTestKey(t.app, ['catalog:read'])).key);
  });
  afterAll(async () => {
    await seed?.close();
    await t?.close();
  });

  async function walk(q: Query, between: (page: number) => Promise<void>): Promise<Item[]> {
    const items: Item[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 200; page++) {
      const res: { statusCode: number; json: () => unknown } = await t.app.inject({
        method: 'GET',
        url: url(q, cursor),
        headers,
      });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { items: Item[]; next_cursor: string | null };
      items.push(...body.items);
      cursor = body.next_cursor;
      if (cursor === null) return items;
      await between(page);
    }
    throw new Error('walk did not end within 200 pages');
  }

  it('walking every page returns exactly the active matching listings, once each, in order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(listingArb, { maxLength: 40 }), queryArb, async (generated, q) => {
        await seed.reset();
        await seed.events(EVENTS.map((eventId) => ({ eventId, startAt: '2027-01-01T00:00:00Z' })));
        const rows = dedupe(generated);
        await seed.listings(rows.map(toSeed));
        const items = await walk(q, async () => undefined);
        const expected = rows
          .filter((r) => !r.removed && matches(q, r))
          .sort((a, b) => compare(q.sort, a, b))
          .map(key);
        expect(items.map((i) => key({ eventId: i.event_id, ticketId: i.ticket_id }))).toEqual(expected);
      }),
      { numRuns: 25 },
    );
  });

  it('stays correct while listings are added and removed between page requests', async () => {
    const churnArb = fc.array(
      fc.record({
        add: fc.array(listingArb, { maxLength: 3 }),
        remove: fc.array(fc.nat(), { maxLength: 3 }),
      }),
      { maxLength: 10 },
    );
    await fc.assert(
      fc.asyncProperty(
        fc.array(listingArb, { maxLength: 30 }),
        queryArb,
        churnArb,
        async (generated, q, churn) => {
          await seed.reset();
          await seed.events(EVENTS.map((eventId) => ({ eventId, startAt: '2027-01-01T00:00:00Z' })));
          const initial = dedupe(generated).filter((r) => !r.removed);
          await seed.listings(initial.map(toSeed));
          const known = new Map(initial.map((r) => [key(r), r]));
          const touched = new Set<string>();
          const items = await walk(q, async (page) => {
            const step = churn[page];
            if (!step) return;
            const live = [...known.values()];
            const removed = step.remove
              .map((i) => live[i % Math.max(live.length, 1)])
              .filter((r) => r !== undefined);
            // New keys only (a re-added key would be a price change, not an add).
            const added = dedupe(step.add).filter((r) => !known.has(key(r)) && !touched.has(key(r)));
            await seed.removeListings(removed);
            await seed.listings(added.map((r) => toSeed({ ...r, removed: false })));
            for (const r of removed) touched.add(key(r));
            for (const r of added) {
              touched.add(key(r));
              known.set(key(r), r);
            }
          });
          const keys = items.map((i) => key({ eventId: i.event_id, ticketId: i.ticket_id }));
          expect(new Set(keys).size).toBe(keys.length);
          for (const k of keys) {
            const row = known.get(k);
            expect(row && matches(q, row)).toBe(true);
          }
          const rowsInOrder = keys.map((k) => known.get(k)).filter((r) => r !== undefined);
          const outOfOrder = rowsInOrder.filter(
            (r, n) => n > 0 && compare(q.sort, rowsInOrder[n - 1] ?? r, r) >= 0,
          );
          expect(outOfOrder).toEqual([]);
          // Every listing present and untouched throughout the walk was returned.
          const throughout = initial.filter((r) => matches(q, r) && !touched.has(key(r))).map(key);
          expect(keys).toEqual(expect.arrayContaining(throughout));
        },
      ),
      { numRuns: 25 },
    );
  });
});
