import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ListingsService } from '../../src/listings/listings.service';
import { bearer, issueTestKey } from '../support/auth-helpers';
import { MirrorSeeder } from '../support/read-mirror';
import { startTestApp, type TestApp } from '../support/test-app';

const U64_MAX = '18446744073709551615';

/** Values a careless or hostile client sends for any parameter. */
const valueArb = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 8 }),
  fc.integer().map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.constantFrom(
    '',
    '0',
    '1',
    '01',
    '1e3',
    '1.5',
    '-0',
    U64_MAX,
    '18446744073709551616',
    'price_asc',
    'price_desc',
    'newest',
    'true',
    'false',
    '2027-01-01T00:00:00Z',
    '2027-02-30T00:00:00Z',
    '9999-12-31T23:59:59-23:59',
    '0001-01-01T00:00:00+01:00',
    '%',
    '_',
    '\\',
    "'; DROP TABLE listings; --",
    'a'.repeat(600),
  ),
);

const paramArb = fc.tuple(
  fc.constantFrom(
    'limit',
    'cursor',
    'sort',
    'min_price',
    'max_price',
    'q',
    'starts_after',
    'starts_before',
    'fresh',
    'unknown',
  ),
  valueArb,
);

const idArb = fc.oneof(
  fc.constantFrom('1', '2', '0', U64_MAX, '18446744073709551616', '-1', 'x', '%20'),
  valueArb,
);

const id = (v: string): string => encodeURIComponent(v) || '0';

const requestArb = fc
  .tuple(
    fc.constantFrom('events', 'event', 'eventListings', 'listings', 'listing'),
    idArb,
    idArb,
    fc.array(paramArb, { maxLength: 4 }),
  )
  .map(([route, a, b, params]) => {
    const path = {
      events: '/v1/events',
      event: `/v1/events/${id(a)}`,
      eventListings: `/v1/events/${id(a)}/listings`,
      listings: '/v1/listings',
      listing: `/v1/listings/${id(a)}/${id(b)}`,
    }[route];
    const query = params.map(([k, v]) => `${k}=${encodeURIComponent(v)}`).join('&');
    return {
      url: query ? `${path}?${query}` : path,
      fresh: params.some(([k, v]) => k === 'fresh' && v === 'true'),
    };
  });

/** The same answer from two apps: identical bytes except the per-request id in error bodies. */
function comparable(body: string): string {
  return body.replace(/"requestId":"[^"]*"/, '"requestId":"-"');
}

const seedMirror = async (app: TestApp): Promise<void> => {
  const seed = await MirrorSeeder.connect(app.databaseUrl);
  try {
    await seed.protocolConfig(6, 'mint');
    await seed.events([
      { eventId: '1', name: 'Opera 100%', startAt: '2027-01-01T00:00:00Z' },
      { eventId: '2', name: 'Gone', startAt: '2027-01-02T00:00:00Z', removed: true },
      { eventId: U64_MAX, name: 'TBA', startAt: 'soon' },
    ]);
    await seed.listings(
      Array.from({ length: 30 }, (_, i) => ({
        eventId: i % 3 === 0 ? U64_MAX : '1',
        ticketId: String(i),
        price: String(BigInt(i % 7) * 10n ** 15n),
        removed: i % 5 === 0,
      })),
    );
    await seed.completedPass('listings', new Date('2026-01-01T00:00:00Z'));
  } finally {
    await seed.close();
  }
};

describe('Read API parameters (fuzzed through HTTP)', () => {
  let cached: TestApp;
  let uncached: TestApp;
  const headers = new Map<TestApp, Record<string, string>>();

  beforeAll(async () => {
    const env = { RATE_LIMIT_CATALOG_READ: '100000', LISTINGS_CACHE_STRICT: 'true' };
    cached = await startTestApp(env);
    uncached = await startTestApp({ ...env, LISTINGS_CACHE_MAX_BYTES: '0' });
    for (const app of [cached, uncached]) {
      await seedMirror(app);
      headers.set(app, bearer((await issueTestKey(app.app, ['catalog:read'])).key));
    }
  });
  afterAll(async () => {
    await cached?.close();
    await uncached?.close();
  });

  it('never answers 500, and the cache on and off give identical answers', async () => {
    await fc.assert(
      fc.asyncProperty(requestArb, async ({ url, fresh }) => {
        const [a, b] = await Promise.all(
          [cached, uncached].map((app) => app.app.inject({ method: 'GET', url, headers: headers.get(app) })),
        );
        expect(a?.statusCode).toBeLessThan(500);
        expect(b?.statusCode).toBeLessThan(500);
        // A live re-read carries its own check time: only the status must agree.
        expect(a?.statusCode).toBe(b?.statusCode);
        const bodies = [a, b].map((r) => (fresh ? '' : comparable(r?.body ?? '')));
        expect(bodies[0]).toBe(bodies[1]);
        // A 400 names what was wrong.
        const named = a?.statusCode !== 400 || (a.json().error.details?.length ?? 0) > 0;
        expect(named).toBe(true);
      }),
      { numRuns: 300 },
    );
    // The cached app did serve from its cache.
    expect(cached.app.get(ListingsService).answers.cache.hits).toBeGreaterThan(0);
  });

  it('walks the same pages with the cache on and off', async () => {
    for (const path of [
      '/v1/listings?limit=4&sort=price_desc',
      '/v1/events?limit=1',
      '/v1/events/1/listings?limit=3',
    ]) {
      const pages = await Promise.all(
        [cached, uncached].map(async (app) => {
          const bodies: string[] = [];
          let cursor: string | null = null;
          for (let i = 0; i < 50; i++) {
            const url: string = cursor === null ? path : `${path}&cursor=${encodeURIComponent(cursor)}`;
            const res = await app.app.inject({ method: 'GET', url, headers: headers.get(app) });
            bodies.push(res.body);
            cursor = res.json<{ next_cursor: string | null }>().next_cursor;
            if (cursor === null) break;
          }
          return bodies;
        }),
      );
      expect(pages[0]).toEqual(pages[1]);
      expect(pages[0]?.length).toBeGreaterThan(1);
    }
  });
});
