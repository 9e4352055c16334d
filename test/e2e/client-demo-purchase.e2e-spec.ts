import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createMarketplaceClient,
  type MarketplaceClient,
  type components,
} from '../../clients/typescript/index';
import { issueTestKey } from '../support/auth-helpers';
import { CHECKOUT_TEST_ENV, ownerOf } from '../support/checkout-helpers';
import { fundedBuyer, type Wallet } from '../support/market';
import { startTestApp, type TestApp } from '../support/test-app';

type Order = components['schemas']['OrderResponseDto'];
type Listing = components['schemas']['ListingResponseDto'];

/** Long-polls the order through the client until it is final (each poll held up to 2 s; at most 20 polls). */
async function untilFinal(client: MarketplaceClient, id: string): Promise<Order> {
  for (let poll = 0; poll < 20; poll++) {
    const { data, error } = await client.GET('/v1/orders/{id}', {
      params: { path: { id }, query: { wait: '2s' } },
    });
    if (error) throw new Error(`GET /v1/orders/${id}: ${error.error.code}`);
    if (data.final) return data;
  }
  throw new Error(`order ${id} not final after 20 polls`);
}

/** The cheapest active demo listing not bought yet, found with the client (after the startup sync filled the mirror). */
async function cheapestListing(client: MarketplaceClient, skip: Set<string>): Promise<Listing> {
  for (let poll = 0; poll < 50; poll++) {
    const { data, error } = await client.GET('/v1/listings', {
      params: { query: { sort: 'price_asc', limit: 100 } },
    });
    if (error) throw new Error(`GET /v1/listings: ${error.error.code}`);
    const listing = data.items.find((l) => !skip.has(`${l.event_id}/${l.ticket_id}`));
    if (listing) return listing;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('no demo listing in the mirror after 50 polls');
}

/**
 * A fetch in front of the service that loses the answer of the first `lose` POSTs /v1/orders after the service
 * handled them (the order exists; the caller sees a 502, as from a proxy whose upstream connection dropped) and
 * fails the next `refuse` ones on the network before they reach it.
 */
function lossyFetch(plan: { lose: number; refuse: number }): {
  fetch: (request: Request) => Promise<Response>;
  orderPosts: string[];
} {
  const orderPosts: string[] = [];
  let lose = plan.lose;
  let refuse = plan.refuse;
  return {
    orderPosts,
    async fetch(request) {
      const isOrderPost = request.method === 'POST' && new URL(request.url).pathname === '/v1/orders';
      if (!isOrderPost) return fetch(request);
      orderPosts.push(request.headers.get('idempotency-key') ?? '');
      if (lose > 0) {
        lose--;
        await (await fetch(request)).arrayBuffer();
        return new Response('bad gateway', { status: 502 });
      }
      if (refuse > 0) {
        refuse--;
        throw new TypeError('fetch failed');
      }
      return fetch(request);
    },
  };
}

describe('Demo purchase through the generated TypeScript client (e2e)', () => {
  let t: TestApp;
  let baseUrl: string;
  let apiKey: string;
  let n = 0;

  beforeAll(async () => {
    // The startup sync pass mirrors the seeded demo catalog (5 events, 60 listings) the client searches.
    t = await startTestApp(
      { ...CHECKOUT_TEST_ENV, SYNC_ENABLED: 'true' },
      { sandbox: { landingDelayMs: 50 } },
    );
    await t.app.listen(0, '127.0.0.1');
    baseUrl = await t.app.getUrl();
    apiKey = (await issueTestKey(t.app, ['catalog:read', 'orders:write'])).key;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A buyer with enough test money for `listing`. */
  function buyerFor(listing: Listing): Wallet {
    return fundedBuyer(t.sandbox, `client-demo-buyer-${++n}`, BigInt(listing.price.minor) * 2n);
  }

  const bought = new Set<string>();

  it('searches the listings, buys the cheapest and sees the order confirmed: every call through the client', async () => {
    const client = createMarketplaceClient({ baseUrl, apiKey });
    const me = await client.GET('/v1/me');
    expect(me.data?.scopes).toEqual(['catalog:read', 'orders:write']);

    const listing = await cheapestListing(client, bought);
    bought.add(`${listing.event_id}/${listing.ticket_id}`);
    const detail = await client.GET('/v1/listings/{eventId}/{ticketId}', {
      params: { path: { eventId: listing.event_id, ticketId: listing.ticket_id } },
    });
    expect(detail.data?.price.minor).toBe(listing.price.minor);

    const buyer = buyerFor(listing);
    const created = await client.POST('/v1/orders', {
      body: {
        buyer_subject: buyer.subject,
        buyer_address: buyer.address,
        event_id: listing.event_id,
        ticket_id: listing.ticket_id,
        expected_price_minor: listing.price.minor,
      },
    });
    expect(created.error).toBeUndefined();
    expect(created.response.status).toBe(202);
    const order: Order = created.data!;
    expect(order).toMatchObject({ final: false, event_id: listing.event_id, ticket_id: listing.ticket_id });
    // The wrapper made the key: a UUID the order is stored under.
    expect(order.idempotency_key).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );

    const done = await untilFinal(client, order.id);
    expect(done).toMatchObject({ state: 'confirmed', final: true, failure: null });
    expect(done.transaction?.upstream_status).toBe('confirmed');
    expect(done.expected_price.minor).toBe(listing.price.minor);
    expect(ownerOf(t.sandbox, BigInt(listing.event_id), BigInt(listing.ticket_id))).toBe(buyer.address);

    // The typed error side: the same order again at another price is the key reused with another body.
    const reused = await client.POST('/v1/orders', {
      params: { header: { 'Idempotency-Key': order.idempotency_key } },
      body: {
        buyer_subject: buyer.subject,
        buyer_address: buyer.address,
        event_id: listing.event_id,
        ticket_id: listing.ticket_id,
        expected_price_minor: (BigInt(listing.price.minor) + 1n).toString(),
      },
    });
    expect(reused.response.status).toBe(422);
    expect(reused.error?.error.code).toBe('IDEMPOTENCY_KEY_REUSED');
  });

  it('a POST answered 5xx (answer lost) and then failing on the network is retried with the same key: one order, one purchase', async () => {
    const lossy = lossyFetch({ lose: 2, refuse: 1 });
    const client = createMarketplaceClient({ baseUrl, apiKey, fetch: lossy.fetch, retryBaseDelayMs: 20 });
    const listing = await cheapestListing(client, bought);
    bought.add(`${listing.event_id}/${listing.ticket_id}`);
    const buyer = buyerFor(listing);
    const paidBefore = t.sandbox.admin.balance({ address: buyer.address });
    const signedBefore = t.sandbox.admin.stats().transactions;
    // And the service's own upstream answers 5xx to its first signing calls: it retries them itself.
    t.sandbox.admin.setFaults([{ operation: 'signUser', kind: 'error', status: 503, times: 2 }]);
    try {
      const created = await client.POST('/v1/orders', {
        body: {
          buyer_subject: buyer.subject,
          buyer_address: buyer.address,
          event_id: listing.event_id,
          ticket_id: listing.ticket_id,
          expected_price_minor: listing.price.minor,
        },
      });
      expect(created.response.status).toBe(202);
      // The service answered the last try as a replay of the order the first (lost) one created.
      expect(created.response.headers.get('idempotent-replayed')).toBe('true');
      expect(lossy.orderPosts).toHaveLength(4);
      expect(new Set(lossy.orderPosts).size).toBe(1);
      const key = lossy.orderPosts[0];
      expect(created.data?.idempotency_key).toBe(key);

      const done = await untilFinal(client, created.data!.id);
      expect(done.state).toBe('confirmed');
      const mine = await client.GET('/v1/orders', { params: { query: { idempotency_key: key } } });
      expect(mine.data?.items.map((o) => o.id)).toEqual([done.id]);
      expect(t.sandbox.admin.balance({ address: buyer.address })).toBe(
        paidBefore - BigInt(listing.price.minor),
      );
      expect(t.sandbox.admin.stats().transactions - signedBefore).toBe(1);
      expect(ownerOf(t.sandbox, BigInt(listing.event_id), BigInt(listing.ticket_id))).toBe(buyer.address);
    } finally {
      t.sandbox.admin.clearFaults();
    }
  });
});
