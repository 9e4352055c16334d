import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingView } from '../../../src/sandbox/admin.types';
import { expectSchema, schemaErrors, TestSandbox } from './sandbox.harness';

type Page<T> = {
  items: T[];
  next_cursor: string | null;
};

describe('sandbox indexer endpoints', () => {
  let sut: TestSandbox;
  beforeAll(async () => {
    sut = await TestSandbox.start({ events: 12, listings: 2500 });
  });
  afterAll(() => sut.close());

  async function walk(path: string, limit: number): Promise<{ items: ListingView[]; pages: number }> {
    const items: ListingView[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const url: string = `${path}${sep}limit=${limit}${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`;
      const res = await sut.get(url);
      expect(res.status).toBe(200);
      const page = res.json() as unknown as Page<ListingView>;
      expectSchema(path.startsWith('/indexer/events') ? 'EventPage' : 'ListingPage', page);
      items.push(...page.items);
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null);
    return { items, pages };
  }

  it('pages upcoming events with valid items and a null cursor at the end', async () => {
    const { items, pages } = await walk('/indexer/events/upcoming', 5);
    expect(items).toHaveLength(12);
    expect(pages).toBe(3);
    expect(new Set(items.map((e) => e.event_id)).size).toBe(12);
    expect(items.some((e) => BigInt(e.event_id) > 2n ** 63n)).toBe(true);
  });

  it('answers limit=1 with 200 as the key check of contract 5.7', async () => {
    const res = await sut.get('/indexer/events/upcoming?limit=1');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect((res.json() as Page<unknown>).items).toHaveLength(1);
  });

  it('walks all active listings exactly once, in an order not sorted by price', async () => {
    const { items } = await walk('/indexer/listings/active', 1000);
    expect(items).toHaveLength(2500);
    expect(new Set(items.map((l) => `${l.event_id}:${l.ticket_id}`)).size).toBe(2500);
    const prices = items.map((l) => BigInt(l.ask_price_minor as string));
    const sorted = prices.every((p, i) => i === 0 || prices[i - 1] <= p);
    expect(sorted).toBe(false);
    expect(items.every((l) => typeof l.ask_price_minor === 'string')).toBe(true);
  });

  it('filters by eventId and keeps the filter bound to the cursor', async () => {
    const all = await sut.firstListings(1);
    const eventId = all[0].event_id;
    const { items } = await walk(`/indexer/listings/active?eventId=${eventId}`, 7);
    expect(items.length).toBeGreaterThan(0);
    expect(items.every((l) => l.event_id === eventId)).toBe(true);
    const first = (
      await sut.get(`/indexer/listings/active?eventId=${eventId}&limit=1`)
    ).json() as Page<unknown>;
    const other = await sut.get(
      `/indexer/listings/active?limit=1&cursor=${encodeURIComponent(first.next_cursor as string)}`,
    );
    expect(other.status).toBe(400);
    expect(schemaErrors('ErrorBody', other.json())).toEqual([]);
  });

  it('returns an empty last page for an event without listings', async () => {
    const event = sut.admin.createEvent({ name: 'Empty' });
    const res = await sut.get(`/indexer/listings/active?eventId=${event.eventId}`);
    expect(res.json()).toEqual({ items: [], next_cursor: null });
  });

  it.each(['0', '1001', 'abc', '-1', '1.5', '', '10&limit=20'])(
    'rejects limit=%s with 400',
    async (limit) => {
      const res = await sut.get(`/indexer/listings/active?limit=${limit}`);
      expect(res.status).toBe(400);
    },
  );

  it.each(['-1', 'x', '18446744073709551616', '1e3'])('rejects eventId=%s with 400', async (eventId) => {
    expect((await sut.get(`/indexer/listings/active?eventId=${eventId}`)).status).toBe(400);
  });

  it('rejects forged, truncated and cross-resource cursors with 400', async () => {
    const page = (await sut.get('/indexer/listings/active?limit=2')).json() as Page<unknown>;
    const cursor = page.next_cursor as string;
    const [payload, tag] = cursor.split('.');
    const forged = `${Buffer.from(
      Buffer.from(payload, 'base64url')
        .toString()
        .replace(/\|(\d+)$/, '|9'),
    ).toString('base64url')}.${tag}`;
    const events = ((await sut.get('/indexer/events/upcoming?limit=1')).json() as Page<unknown>)
      .next_cursor as string;
    for (const bad of [forged, cursor.slice(0, -2), 'garbage', `${payload}.`, events]) {
      const res = await sut.get(`/indexer/listings/active?cursor=${encodeURIComponent(bad)}`);
      expect({ bad, status: res.status }).toEqual({ bad, status: 400 });
    }
  });

  it('keeps a walk correct while listings are removed and added between pages', async () => {
    const first = (await sut.get('/indexer/listings/active?limit=500')).json() as Page<ListingView>;
    const seen = new Set(first.items.map((l) => `${l.event_id}:${l.ticket_id}`));
    const event = sut.admin.createEvent({ name: 'Churn' });
    const added = sut.admin.seedListing({
      eventId: event.eventId,
      seller: { kind: 'user', subject: 'churner' },
      askPriceMinor: 5n,
    });
    let cursor = first.next_cursor;
    const rest: ListingView[] = [];
    while (cursor !== null) {
      const res = await sut.get(`/indexer/listings/active?limit=1000&cursor=${encodeURIComponent(cursor)}`);
      const page = res.json() as Page<ListingView>;
      rest.push(...page.items);
      cursor = page.next_cursor;
    }
    const restKeys = rest.map((l) => `${l.event_id}:${l.ticket_id}`);
    expect(restKeys.filter((k) => seen.has(k))).toEqual([]);
    expect(restKeys).toContain(`${added.event_id}:${added.ticket_id}`);
  });

  it('serves the protocol config with stablecoin_decimals', async () => {
    const res = await sut.get('/indexer/protocol-config');
    expect(res.status).toBe(200);
    const config = res.json();
    expectSchema('ProtocolConfig', config);
    expect(config).toMatchObject({
      stablecoin_decimals: 6,
      stablecoin_mint: sut.admin.stablecoinMint,
      fee_payer: sut.admin.feePayerAddress,
    });
  });

  it('answers unknown paths with an empty 404', async () => {
    const res = await sut.get('/indexer/nothing');
    expect(res.status).toBe(404);
    expect(res.text).toBe('');
  });
});

describe('sandbox indexer at 50k listings', () => {
  it('pages through every listing at maximum page size', async () => {
    const sut = await TestSandbox.start({ events: 300, listings: 50_000 });
    try {
      let cursor: string | null = null;
      const keys = new Set<string>();
      let pages = 0;
      do {
        const res = await sut.get(
          `/indexer/listings/active?limit=1000${cursor === null ? '' : `&cursor=${encodeURIComponent(cursor)}`}`,
        );
        const page = res.json() as Page<ListingView>;
        if (pages === 0) expectSchema('ListingPage', page);
        for (const item of page.items) keys.add(`${item.event_id}:${item.ticket_id}`);
        cursor = page.next_cursor;
        pages++;
      } while (cursor !== null);
      expect(keys.size).toBe(50_000);
      expect(pages).toBe(50);
    } finally {
      await sut.close();
    }
  });
});
