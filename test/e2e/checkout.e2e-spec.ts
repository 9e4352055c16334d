import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  CHECKOUT_TEST_ENV,
  getOrder,
  market,
  mirrorListing,
  orderBody,
  ownerOf,
  postOrder,
  refreshMirror,
  waitFinal,
} from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

describe('Checkout: orders over HTTP against the sandbox (e2e)', () => {
  let t: TestApp;
  let client: TestClient;
  let other: TestClient;
  let n = 0;
  const key = (): string => `order-${++n}`;

  beforeAll(async () => {
    t = await startTestApp(
      {
        ...CHECKOUT_TEST_ENV,
        CHECKOUT_MAX_OPEN_ORDERS_PER_BUYER: '2',
        CHECKOUT_MAX_PURCHASES_PER_BUYER_PER_EVENT: '2',
      },
      { sandbox: { landingDelayMs: 50 } },
    );
    client = await issueTestKey(t.app, ['orders:write']);
    other = await issueTestKey(t.app, ['orders:write']);
  });
  afterAll(async () => {
    await t?.close();
  });

  it('buys a listing: 202, then confirmed; the buyer owns the ticket, the seller was paid, the mirror dropped the listing', async () => {
    const { listing, buyer } = market(t.sandbox, 'happy', 2_500_000n);
    await refreshMirror(t.app, listing.eventId);
    expect(await mirrorListing(t.app, listing.eventId, listing.ticketId)).toMatchObject({ removed_at: null });
    const buyerBefore = t.sandbox.admin.balance({ address: buyer.address });
    const payoutBefore = t.sandbox.admin.balance({ address: listing.sellerPayout });

    const res = await postOrder(t.app, client.key, key(), orderBody(listing, buyer));
    expect(res.status).toBe(202);
    expect(res.headers['idempotent-replayed']).toBeUndefined();
    expect(res.body).toMatchObject({ state: 'created', final: false, attempt: 1 });
    expect(res.body.expected_price).toEqual({ minor: '2500000', amount: '2.5', decimals: 6 });

    const done = await waitFinal(t.app, client.key, res.body.id);
    expect(done).toMatchObject({ state: 'confirmed', final: true, failure: null });
    expect(done.transaction?.upstream_status).toBe('confirmed');
    expect(done.steps?.map((s) => s.step)).toEqual([
      'created',
      'revalidated',
      'signing',
      'signed',
      'submitted',
      'confirmed',
      'mirror_refreshed',
    ]);
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
    expect(t.sandbox.admin.balance({ address: buyer.address })).toBe(buyerBefore - 2_500_000n);
    expect(t.sandbox.admin.balance({ address: listing.sellerPayout })).toBe(payoutBefore + 2_500_000n);
    expect((await mirrorListing(t.app, listing.eventId, listing.ticketId))?.removed_at).not.toBeNull();
    // One log line per step, each with the order id and the request id.
    const stepLines = t.logs.records().filter((r) => r.msg === 'checkout step' && r.orderId === res.body.id);
    expect(stepLines.length).toBeGreaterThanOrEqual(7);
    expect(stepLines.every((r) => typeof r.requestId === 'string' && r.requestId.length > 0)).toBe(true);
  });

  it('rejects a listing that is gone, with nothing signed upstream', async () => {
    const { listing, buyer } = market(t.sandbox, 'gone');
    const body = { ...orderBody(listing, buyer), ticket_id: (listing.ticketId + 1000n).toString() };
    const signedBefore = t.sandbox.admin.stats().transactions;
    const res = await postOrder(t.app, client.key, key(), body);
    expect(res.status).toBe(202);
    const done = await waitFinal(t.app, client.key, res.body.id);
    expect(done).toMatchObject({
      state: 'rejected',
      final: true,
      failure: { code: 'LISTING_GONE' },
      transaction: null,
    });
    expect(t.sandbox.admin.stats().transactions).toBe(signedBefore);
  });

  it('rejects a changed price with the current price, with nothing signed upstream', async () => {
    const { listing, buyer } = market(t.sandbox, 'price', 3_000_000n);
    const signedBefore = t.sandbox.admin.stats().transactions;
    const res = await postOrder(t.app, client.key, key(), orderBody(listing, buyer, 2_000_000n));
    const done = await waitFinal(t.app, client.key, res.body.id);
    expect(done).toMatchObject({
      state: 'rejected',
      failure: { code: 'PRICE_CHANGED' },
      current_price: { minor: '3000000', amount: '3' },
    });
    expect(t.sandbox.admin.stats().transactions).toBe(signedBefore);
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(listing.seller.address);
  });

  it('reads the listing live once per new order: the read begun with the POST serves its revalidation', async () => {
    const listingReads = async (): Promise<number> => {
      const res = await t.app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/metrics' });
      const line = /upstream_requests_total\{operation="listActiveListings",status="200"\} (\d+)/.exec(
        res.body,
      );
      return Number(line?.[1] ?? 0);
    };
    // A changed price: the order ends after its revalidation (no mirror refresh reads the listings after it).
    const { listing, buyer } = market(t.sandbox, 'one-read', 3_000_000n);
    // Earlier tests' mirror refreshes (after a confirmed order) read listings too: let them finish first.
    const db = t.app.get(DataSource);
    await waitUntil(
      async () =>
        Number(
          (
            await db.query<{ n: string }[]>(
              `SELECT count(*) AS n FROM orders WHERE recovery_point = 'refresh'`,
            )
          )[0]?.n,
        ) === 0,
      10_000,
      20,
    );
    const before = await listingReads();
    const res = await postOrder(t.app, client.key, key(), orderBody(listing, buyer, 2_000_000n));
    expect((await waitFinal(t.app, client.key, res.body.id)).failure?.code).toBe('PRICE_CHANGED');
    expect(await listingReads()).toBe(before + 1);
  });

  it('replays the same key and body as the same order; another body under the key is 422', async () => {
    const { listing, buyer } = market(t.sandbox, 'replay');
    const k = key();
    const first = await postOrder(t.app, client.key, k, orderBody(listing, buyer));
    const again = await postOrder(t.app, client.key, k, orderBody(listing, buyer));
    expect(again.status).toBe(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    const changed = await postOrder(t.app, client.key, k, orderBody(listing, buyer, 1n));
    expect(changed.status).toBe(422);
    expect(changed.body.error?.code).toBe('IDEMPOTENCY_KEY_REUSED');
    // The same key of another client is another order.
    const theirs = await postOrder(t.app, other.key, k, orderBody(listing, buyer, 1n));
    expect(theirs.status).toBe(202);
    expect(theirs.body.id).not.toBe(first.body.id);
    await waitFinal(t.app, client.key, first.body.id);
    await waitFinal(t.app, other.key, theirs.body.id);
  });

  it('stores a key with quotes, backslashes, $n and semicolons exactly (the create query inlines it); such a subject is a 400 naming it', async () => {
    // Subjects are one safe set everywhere (src/common/subject.ts): quotes and semicolons never reach the query.
    const unsafe = market(t.sandbox, "q'uo\\te$1;-- \u00fc'');");
    const refused = await postOrder(t.app, client.key, key(), orderBody(unsafe.listing, unsafe.buyer));
    expect(refused.status).toBe(400);
    expect(refused.body.error?.details?.map((d) => d.field)).toEqual(['buyer_subject']);
    const { listing, buyer } = market(t.sandbox, 'q.uo_te:1@-x');
    const k = `k'ey\\$2;--${key()}`;
    const first = await postOrder(t.app, client.key, k, orderBody(listing, buyer));
    expect(first.status).toBe(202);
    expect(first.body.buyer).toEqual({ subject: buyer.subject, address: buyer.address });
    expect(first.body.idempotency_key).toBe(k);
    const again = await postOrder(t.app, client.key, k, orderBody(listing, buyer));
    expect({ status: again.status, id: again.body.id }).toEqual({ status: 202, id: first.body.id });
    expect((await waitFinal(t.app, client.key, first.body.id)).state).toBe('confirmed');
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
  });

  it('400 names the field: missing Idempotency-Key, bad u64, unknown field', async () => {
    const { listing, buyer } = market(t.sandbox, 'bad');
    const noKey = await postOrder(t.app, client.key, undefined, orderBody(listing, buyer));
    expect(noKey.status).toBe(400);
    expect(noKey.body.error?.details?.map((d) => d.field)).toEqual(['Idempotency-Key']);
    const bad = await postOrder(t.app, client.key, key(), {
      ...orderBody(listing, buyer),
      event_id: '-1',
      expected_price_minor: '18446744073709551616',
      extra: 1,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error?.details?.map((d) => d.field).sort()).toEqual([
      'event_id',
      'expected_price_minor',
      'extra',
    ]);
    // PostgreSQL text cannot hold NUL (and the create query inlines the subject): a 400, never a 500.
    const nul = await postOrder(t.app, client.key, key(), {
      ...orderBody(listing, buyer),
      buyer_subject: 'a\u0000b',
    });
    expect(nul.status).toBe(400);
    expect(nul.body.error?.details?.map((d) => d.field)).toEqual(['buyer_subject']);
    const wait = await getOrder(
      t.app,
      client.key,
      `/v1/orders/00000000-0000-4000-8000-000000000000?wait=forever`,
    );
    expect(wait.status).toBe(400);
  });

  it("another client's order is a 404; lookup by key and the paged list show only the client's own", async () => {
    const { listing, buyer } = market(t.sandbox, 'own');
    const k = key();
    const mine = await postOrder(t.app, client.key, k, orderBody(listing, buyer));
    expect((await getOrder(t.app, other.key, `/v1/orders/${mine.body.id}`)).status).toBe(404);
    expect((await getOrder(t.app, client.key, `/v1/orders/not-a-uuid`)).status).toBe(404);
    const byKey = await getOrder(t.app, client.key, `/v1/orders?idempotency_key=${k}`);
    expect((byKey.body as unknown as { items: { id: string }[] }).items.map((o) => o.id)).toEqual([
      mine.body.id,
    ]);
    const theirsByKey = await getOrder(t.app, other.key, `/v1/orders?idempotency_key=${k}`);
    expect((theirsByKey.body as unknown as { items: unknown[] }).items).toEqual([]);

    const seen: string[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 20; page++) {
      const res = await getOrder(t.app, client.key, `/v1/orders?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      const body = res.body as unknown as { items: { id: string }[]; next_cursor: string | null };
      seen.push(...body.items.map((o) => o.id));
      cursor = body.next_cursor;
      if (!cursor) break;
    }
    expect(seen).toContain(mine.body.id);
    expect(new Set(seen).size).toBe(seen.length);
    expect((await getOrder(t.app, client.key, `/v1/orders?cursor=garbage!`)).status).toBe(400);
    await waitFinal(t.app, client.key, mine.body.id);
  });

  it("an orders cursor is bound to its client: another client's presentation is 400 naming cursor", async () => {
    const orders = [market(t.sandbox, 'cursor-a'), market(t.sandbox, 'cursor-b')];
    const ids: string[] = [];
    for (const { listing, buyer } of orders)
      ids.push((await postOrder(t.app, client.key, key(), orderBody(listing, buyer))).body.id);
    const first = await getOrder(t.app, client.key, `/v1/orders?limit=1`);
    const cursor = (first.body as unknown as { next_cursor: string | null }).next_cursor;
    expect(cursor).toEqual(expect.any(String));
    // The owner pages on with it.
    expect((await getOrder(t.app, client.key, `/v1/orders?limit=1&cursor=${cursor}`)).status).toBe(200);
    const res = await getOrder(t.app, other.key, `/v1/orders?limit=1&cursor=${cursor}`);
    expect(res.status).toBe(400);
    const error = (res.body as unknown as { error: { code: string; details: { field: string }[] } }).error;
    expect(error.code).toBe('VALIDATION_FAILED');
    expect(error.details.map((d) => d.field)).toEqual(['cursor']);
    for (const id of ids) await waitFinal(t.app, client.key, id);
  });

  it('long-polls a state change within the bound', async () => {
    const { listing, buyer } = market(t.sandbox, 'poll');
    const created = await postOrder(t.app, client.key, key(), orderBody(listing, buyer));
    const res = await getOrder(t.app, client.key, `/v1/orders/${created.body.id}?wait=5s`);
    expect(res.status).toBe(200);
    expect(res.body.state).not.toBe('created');
    await waitFinal(t.app, client.key, created.body.id);
  });

  it('per-buyer limits: open orders → 429, orders per event per window → 409, each with its code', async () => {
    // Transactions never land (landing needs the sandbox clock past the delay): the orders stay open.
    t.sandbox.admin.setFaults([{ operation: 'listings', kind: 'hang' }]);
    try {
      const a = market(t.sandbox, 'limit-a');
      const b = market(t.sandbox, 'limit-b');
      const c = market(t.sandbox, 'limit-c');
      const buyer = a.buyer;
      expect((await postOrder(t.app, client.key, key(), orderBody(a.listing, buyer))).status).toBe(202);
      expect((await postOrder(t.app, client.key, key(), orderBody(b.listing, buyer))).status).toBe(202);
      const third = await postOrder(t.app, client.key, key(), orderBody(c.listing, buyer));
      expect(third.status).toBe(429);
      expect(third.body.error?.code).toBe('BUYER_OPEN_ORDERS_LIMIT');
      expect(third.headers['retry-after']).toBeDefined();
    } finally {
      t.sandbox.admin.clearFaults();
    }
    const d = market(t.sandbox, 'limit-d');
    const first = await postOrder(t.app, client.key, key(), orderBody(d.listing, d.buyer));
    expect((await waitFinal(t.app, client.key, first.body.id)).state).toBe('confirmed');
    // A rejected order (ticket not listed) does not count towards the per-event limit.
    const sameEvent = { ...orderBody(d.listing, d.buyer), ticket_id: '999999' };
    const rejected = await postOrder(t.app, client.key, key(), sameEvent);
    expect((await waitFinal(t.app, client.key, rejected.body.id)).state).toBe('rejected');
    t.sandbox.admin.setFaults([{ operation: 'listings', kind: 'hang' }]);
    try {
      const open = await postOrder(t.app, client.key, key(), { ...sameEvent, ticket_id: '999997' });
      expect(open.status).toBe(202);
      const over = await postOrder(t.app, client.key, key(), { ...sameEvent, ticket_id: '999996' });
      expect(over.status).toBe(409);
      expect(over.body.error?.code).toBe('BUYER_EVENT_LIMIT');
    } finally {
      t.sandbox.admin.clearFaults();
    }
  });

  it('exposes orders by state, the oldest open order age, time to final and attempts per order', async () => {
    const res = await t.app.getHttpAdapter().getInstance().inject({ method: 'GET', url: '/metrics' });
    const text = res.body;
    expect(res.statusCode).toBe(200);
    expect(text).toMatch(/checkout_orders\{state="confirmed"\} \d+/);
    expect(text).toContain('checkout_oldest_open_order_age_seconds');
    expect(text).toMatch(/checkout_order_time_to_final_seconds_count\{state="confirmed"\} \d+/);
    expect(text).toMatch(/checkout_order_attempts_bucket\{le="1",state="confirmed"\} \d+/);
  });
});
