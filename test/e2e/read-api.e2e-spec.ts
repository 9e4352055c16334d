import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bearer, issueTestKey } from '../support/auth-helpers';
import { MirrorSeeder } from '../support/read-mirror';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

const U64_MAX = '18446744073709551615';
const MINT = 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v';

interface Page<T> {
  items: T[];
  next_cursor: string | null;
  data_as_of: string | null;
  stale: boolean;
}
type Json = Record<string, unknown>;

describe('Read API (GET /v1/events, /v1/listings)', () => {
  let t: TestApp;
  let seed: MirrorSeeder;
  let headers: Record<string, string>;

  // Strict: each answer re-reads the generation, so a commit made by the test is visible at once.
  beforeAll(async () => {
    t = await startTestApp({ RATE_LIMIT_CATALOG_READ: '100000', LISTINGS_CACHE_STRICT: 'true' });
    seed = await MirrorSeeder.connect(t.databaseUrl);
    headers = bearer((await issueTestKey(t.app, ['catalog:read'])).key);
  });
  afterAll(async () => {
    await seed?.close();
    await t?.close();
  });
  beforeEach(async () => {
    await seed.reset();
  });

  async function get(url: string, extra: Record<string, string> = {}) {
    return t.app.inject({ method: 'GET', url, headers: { ...headers, ...extra } });
  }
  async function ok<T>(url: string): Promise<T> {
    const res = await get(url);
    expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
    return res.json<T>();
  }

  /** Every event id of a walk through all pages of `/v1/events?limit=…<query>`. */
  async function walkEvents(query: string, limit: number): Promise<unknown[]> {
    const ids: unknown[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 20; page++) {
      const suffix: string = cursor === null ? '' : `&cursor=${cursor}`;
      const body: Page<Json> = await ok<Page<Json>>(`/v1/events?limit=${limit}${query}${suffix}`);
      ids.push(...body.items.map((e) => e.event_id));
      cursor = body.next_cursor;
      if (cursor === null) return ids;
    }
    throw new Error('walk did not end');
  }

  it('lists events by start time then id, unparsed start times last, with name search and time window', async () => {
    await seed.events([
      { eventId: '3', name: 'Opera Night', startAt: '2027-01-02T00:00:00Z' },
      { eventId: '2', name: 'Rock 100% Live', startAt: '2027-01-02T00:00:00Z' },
      { eventId: '1', name: 'OPERA matinee', startAt: '2027-01-01T10:00:00+02:00' },
      { eventId: '9', name: 'Opera TBA', startAt: null },
      { eventId: '4', name: 'Gone opera', startAt: '2027-01-01T00:00:00Z', removed: true },
    ]);
    const all = await ok<Page<Json>>('/v1/events');
    expect(all.items.map((e) => e.event_id)).toEqual(['1', '2', '3', '9']);
    expect(all.items[0]).toMatchObject({
      start_at: '2027-01-01T08:00:00.000Z',
      start_at_raw: '2027-01-01T10:00:00+02:00',
    });
    expect(all.items[3]).toMatchObject({ start_at: null, start_at_raw: 'to be announced' });
    expect(all.next_cursor).toBeNull();

    const opera = await ok<Page<Json>>('/v1/events?q=oPeRa');
    expect(opera.items.map((e) => e.event_id)).toEqual(['1', '3', '9']);
    // LIKE wildcards in q are literal characters.
    expect((await ok<Page<Json>>('/v1/events?q=100%25')).items.map((e) => e.event_id)).toEqual(['2']);
    expect((await ok<Page<Json>>('/v1/events?q=_')).items).toEqual([]);

    const window = await ok<Page<Json>>(
      '/v1/events?starts_after=2027-01-01T08:00:00Z&starts_before=2027-01-03T00:00:00Z',
    );
    expect(window.items.map((e) => e.event_id)).toEqual(['2', '3']);
  });

  it('pages events with a cursor bound to its filters', async () => {
    await seed.events(
      Array.from({ length: 5 }, (_, i) => ({
        eventId: String(i + 1),
        startAt: `2027-01-0${i + 1}T00:00:00Z`,
      })),
    );
    const first = await ok<Page<Json>>('/v1/events?limit=2');
    expect(first.items.map((e) => e.event_id)).toEqual(['1', '2']);
    const second = await ok<Page<Json>>(`/v1/events?limit=2&cursor=${first.next_cursor}`);
    expect(second.items.map((e) => e.event_id)).toEqual(['3', '4']);
    const other = await get(`/v1/events?limit=2&q=event&cursor=${first.next_cursor}`);
    expect(other.statusCode).toBe(400);
    expect(other.json().error.details).toEqual([{ field: 'cursor', problems: expect.any(Array) }]);
    const cross = await get(`/v1/listings?cursor=${first.next_cursor}`);
    expect(cross.statusCode).toBe(400);
  });

  it('pages events across equal start times into the undated ones, with and without a name search', async () => {
    // Ids out of start order, two equal start times, three undated events, one removed: every page size
    // walks the same order, and a page may end on a dated event with undated ones still to come.
    await seed.events([
      { eventId: '8', name: 'Gala one', startAt: '2027-03-01T00:00:00Z' },
      { eventId: '2', name: 'Gala two', startAt: '2027-01-01T00:00:00Z' },
      { eventId: '6', name: 'Match', startAt: '2027-01-01T00:00:00Z' },
      { eventId: '4', name: 'GALA three', startAt: '2027-02-01T00:00:00Z' },
      { eventId: '9', name: 'Gala tba', startAt: null },
      { eventId: '3', name: 'Match tba', startAt: null },
      { eventId: '5', name: 'gala later', startAt: null },
      { eventId: '7', name: 'Gala gone', startAt: '2027-01-15T00:00:00Z', removed: true },
    ]);
    for (const limit of [1, 2, 3, 4, 7, 100]) {
      expect(await walkEvents('', limit)).toEqual(['2', '6', '4', '8', '3', '5', '9']);
      expect(await walkEvents('&q=gala', limit)).toEqual(['2', '4', '8', '5', '9']);
      expect(await walkEvents('&starts_before=2027-02-15T00:00:00Z', limit)).toEqual(['2', '6', '4']);
    }
  });

  it('shows one event with its listing summary, 404 unknown, 410 removed, 400 for a malformed id', async () => {
    await seed.protocolConfig(6, MINT);
    await seed.events([
      { eventId: '7', startAt: '2027-01-01T00:00:00Z' },
      { eventId: '8', startAt: '2027-01-01T00:00:00Z', removed: true },
    ]);
    await seed.listings([
      { eventId: '7', ticketId: '1', price: '2500000' },
      { eventId: '7', ticketId: '2', price: '1500000' },
      { eventId: '7', ticketId: '3', price: '100', removed: true },
    ]);
    const event = await ok<Json>('/v1/events/7');
    expect(event.listing_summary).toEqual({
      active_listings: 2,
      lowest_ask: { minor: '1500000', decimals: 6, amount: '1.5', currency_mint: MINT },
      highest_ask: { minor: '2500000', decimals: 6, amount: '2.5', currency_mint: MINT },
    });
    expect((await get('/v1/events/70')).statusCode).toBe(404);
    const gone = await get('/v1/events/8');
    expect(gone.statusCode).toBe(410);
    expect(gone.json().error).toMatchObject({
      code: 'GONE',
      details: { event_id: '8', last_seen_at: expect.any(String) },
    });
    for (const bad of ['-1', '01', 'abc', '18446744073709551616', '1.5']) {
      const res = await get(`/v1/events/${bad}`);
      expect({ bad, status: res.statusCode }).toEqual({ bad, status: 400 });
      expect(res.json().error.details[0].field).toBe('event_id');
    }
    expect((await get('/v1/events/70/listings')).statusCode).toBe(404);
    expect((await get('/v1/events/8/listings')).statusCode).toBe(410);
  });

  it('sorts listings by the exact u64 price, beyond 2^53 and up to the maximum', async () => {
    await seed.events([{ eventId: '1', startAt: '2027-01-01T00:00:00Z' }]);
    // Equal as doubles (2^53 + 1 rounds to 2^53): only exact integer ordering separates them.
    const prices = ['9007199254740993', '9007199254740992', U64_MAX, '0', '18446744073709551614'];
    await seed.listings(prices.map((price, i) => ({ eventId: '1', ticketId: String(i + 1), price })));
    const asc = await ok<Page<{ price: { minor: string } }>>('/v1/events/1/listings');
    expect(asc.items.map((l) => l.price.minor)).toEqual([
      '0',
      '9007199254740992',
      '9007199254740993',
      '18446744073709551614',
      U64_MAX,
    ]);
    const desc = await ok<Page<{ price: { minor: string } }>>(
      '/v1/listings?sort=price_desc&min_price=9007199254740993',
    );
    expect(desc.items.map((l) => l.price.minor)).toEqual([
      U64_MAX,
      '18446744073709551614',
      '9007199254740993',
    ]);
  });

  it('formats money exactly, and says why when the protocol config is unknown', async () => {
    await seed.events([{ eventId: '1', startAt: '2027-01-01T00:00:00Z' }]);
    await seed.listings([{ eventId: '1', ticketId: '1', price: U64_MAX }]);
    const unknown = await ok<Json>('/v1/listings/1/1');
    expect(unknown.price).toEqual({
      minor: U64_MAX,
      unformatted_reason: expect.stringContaining('protocol config'),
    });
    await seed.protocolConfig(18, null);
    expect((await ok<Json>('/v1/listings/1/1')).price).toEqual({
      minor: U64_MAX,
      decimals: 18,
      amount: '18.446744073709551615',
      currency_mint: null,
    });
    await seed.protocolConfig(0, MINT);
    expect((await ok<Json>('/v1/listings/1/1')).price).toMatchObject({ amount: U64_MAX, decimals: 0 });
  });

  it('answers one listing: 404 never mirrored, 410 removed with when it was last seen', async () => {
    await seed.listings([
      { eventId: '1', ticketId: '1', price: '5' },
      { eventId: '1', ticketId: '2', price: '5', removed: true },
    ]);
    const listing = await ok<Json>('/v1/listings/1/1');
    expect(listing).toMatchObject({
      event_id: '1',
      ticket_id: '1',
      seller: 'seller-1',
      checked_live_at: null,
    });
    expect((await get('/v1/listings/1/3')).statusCode).toBe(404);
    const gone = await get('/v1/listings/1/2');
    expect(gone.statusCode).toBe(410);
    expect(gone.json().error.details).toMatchObject({ ticket_id: '2', removed_at: expect.any(String) });
    expect((await get('/v1/listings/1/x')).json().error.details[0].field).toBe('ticketId');
  });

  it('carries freshness: data_as_of from the last completed pass, stale past the threshold', async () => {
    await seed.listings([{ eventId: '1', ticketId: '1', price: '5' }]);
    const never = await ok<Page<Json>>('/v1/listings');
    expect(never).toMatchObject({ data_as_of: null, stale: true });
    const old = new Date(Date.now() - 3_600_000 * 24);
    await seed.completedPass('listings', old);
    expect(await ok<Page<Json>>('/v1/listings')).toMatchObject({
      data_as_of: old.toISOString(),
      stale: true,
    });
    const recent = new Date(Date.now() - 1000);
    await seed.completedPass('listings', recent);
    const fresh = await ok<Page<Json>>('/v1/listings');
    expect(fresh).toMatchObject({ data_as_of: recent.toISOString(), stale: false });
    // The row was written long before the pass; the pass saw it (it is still active).
    expect(fresh.items[0]?.last_seen_at).toBe(recent.toISOString());
    // Events have their own passes.
    expect(await ok<Page<Json>>('/v1/events')).toMatchObject({ data_as_of: null, stale: true });
  });

  it('answers If-None-Match with 304 until the mirror changes, with Cache-Control from the sync interval', async () => {
    await seed.listings([{ eventId: '1', ticketId: '1', price: '5' }]);
    const first = await get('/v1/listings?limit=5');
    const etag = first.headers.etag as string;
    expect(etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(first.headers['cache-control']).toMatch(/^private, max-age=\d+$/);
    const again = await get('/v1/listings?limit=5', { 'if-none-match': etag });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    expect((await get('/v1/listings?limit=5', { 'if-none-match': `"x", W/${etag}` })).statusCode).toBe(304);
    await seed.listings([{ eventId: '1', ticketId: '2', price: '6' }]);
    const changed = await get('/v1/listings?limit=5', { 'if-none-match': etag });
    expect(changed.statusCode).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
  });

  it('validates every parameter with a 400 naming it', async () => {
    const cases: [string, string][] = [
      ['/v1/events?limit=0', 'limit'],
      ['/v1/events?limit=101', 'limit'],
      ['/v1/events?starts_after=2027-02-30T00:00:00Z', 'starts_after'],
      ['/v1/events?starts_before=tomorrow', 'starts_before'],
      ['/v1/events?q=', 'q'],
      ['/v1/events?cursor=abc', 'cursor'],
      ['/v1/events?unknown=1', 'unknown'],
      ['/v1/listings?sort=cheapest', 'sort'],
      ['/v1/listings?min_price=-1', 'min_price'],
      ['/v1/listings?max_price=18446744073709551616', 'max_price'],
      ['/v1/listings?min_price=5&max_price=4', 'max_price'],
      ['/v1/listings/1/1?fresh=yes', 'fresh'],
    ];
    for (const [url, field] of cases) {
      const res = await get(url);
      const fields = (res.json().error.details as { field: string }[]).map((d) => d.field);
      expect({ url, status: res.statusCode, named: fields.includes(field) }).toEqual({
        url,
        status: 400,
        named: true,
      });
    }
  });

  it('needs the catalog:read scope', async () => {
    const other = bearer((await issueTestKey(t.app, ['orders:write'])).key);
    const res = await t.app.inject({ method: 'GET', url: '/v1/listings', headers: other });
    expect(res.statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/v1/events' })).statusCode).toBe(401);
  });

  it('re-reads a listing live with fresh=true and updates the mirror row when it differs', async () => {
    const event = t.sandbox.admin.createEvent({ name: 'Fresh' });
    const live = t.sandbox.admin.seedListing({
      eventId: event.eventId,
      seller: { kind: 'user', subject: 'fresh-seller' },
      askPriceMinor: 4200n,
    });
    const eventId = event.eventId.toString();
    await seed.listings([
      { eventId, ticketId: live.ticket_id, price: '1' },
      { eventId, ticketId: '999999', price: '1' },
    ]);
    const before = await get(`/v1/listings/${eventId}/${live.ticket_id}`);
    expect(before.json().price.minor).toBe('1');

    const res = await get(`/v1/listings/${eventId}/${live.ticket_id}?fresh=true`);
    expect({ status: res.statusCode, body: res.body }).toMatchObject({ status: 200 });
    expect(res.json()).toMatchObject({ price: { minor: '4200' }, checked_live_at: expect.any(String) });
    expect(res.headers['cache-control']).toBe('private, no-cache');
    expect((await seed.listingRow(eventId, live.ticket_id))?.price).toBe('4200');
    // Every replica's cache moves on: the plain read now shows the live price too.
    await waitUntil(
      async () => (await get(`/v1/listings/${eventId}/${live.ticket_id}`)).json().price.minor === '4200',
      5000,
    );

    const gone = await get(`/v1/listings/${eventId}/999999?fresh=true`);
    expect(gone.statusCode).toBe(410);
    expect(gone.json().error.details.checked_live_at).toEqual(expect.any(String));
    expect((await seed.listingRow(eventId, '999999'))?.removed_at).not.toBeNull();
    expect((await get(`/v1/listings/${eventId}/123456?fresh=true`)).statusCode).toBe(404);
  });
});
