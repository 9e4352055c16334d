import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  CHECKOUT_TEST_ENV,
  market,
  orderBody,
  postOrder,
  refreshMirror,
  waitFinal,
} from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { seedTicket, waitForTx, type TxBody } from '../support/transactions-helpers';
import { waitUntil } from '../support/wait';

interface FeedItem {
  id: string;
  type: string;
  version: number;
  data: Record<string, unknown>;
}

/** A list or cancel transaction that is final and whose after-final mirror refresh ran. */
const onFinal = (x: TxBody): boolean => Boolean(x.final && x.history?.some((h) => h.type === 'on_final'));

/**
 * Catalog events through the whole app and the sandbox (issue 32 items 1–2): a listing bought here is removed with
 * reason `sold`, one cancelled here `cancelled`, one that vanished upstream `gone_upstream`; they reach only the
 * client subscribed to the event (endpoint `event_ids`), in its feed; `event_ids` is validated, stored and shown.
 */
describe('Catalog events (e2e, against the sandbox)', () => {
  let t: TestApp;
  let server: ReturnType<TestApp['app']['getHttpServer']>;
  let subscriber: TestClient;
  let bystander: TestClient;
  let buyer: TestClient;
  let seller: TestClient;
  let endpointId: string;
  /** Event 1 is never listed: the endpoint has event_ids from the start (without, its types name every event's). */
  const followed: string[] = ['1'];

  beforeAll(async () => {
    t = await startTestApp(
      { ...CHECKOUT_TEST_ENV, RATE_LIMIT_LISTINGS_WRITE: '100000' },
      { sandbox: { landingDelayMs: 100 } },
    );
    server = t.app.getHttpServer();
    subscriber = await issueTestKey(t.app, ['webhooks:write']);
    bystander = await issueTestKey(t.app, ['webhooks:write']);
    buyer = await issueTestKey(t.app, ['orders:write']);
    seller = await issueTestKey(t.app, ['listings:write', 'transactions:write']);
    // The bystander has an endpoint for every type (event_types empty) and no event_ids: no catalog event.
    await request(server)
      .post('/v1/webhooks/endpoints')
      .set(bearer(bystander.key))
      .send({ url: 'http://127.0.0.1:9/hooks' })
      .expect(201);
    const created = await request(server)
      .post('/v1/webhooks/endpoints')
      .set(bearer(subscriber.key))
      .send({
        url: 'http://127.0.0.1:9/hooks',
        event_types: ['listing.listed', 'listing.removed'],
        event_ids: followed,
      })
      .expect(201);
    endpointId = (created.body as { id: string }).id;
  });
  afterAll(async () => {
    await t?.close();
  });

  /** Adds an event to the subscriber's endpoint filter (PATCH replaces the list). */
  const follow = async (eventId: bigint): Promise<void> => {
    followed.push(eventId.toString());
    const res = await request(server)
      .patch(`/v1/webhooks/endpoints/${endpointId}`)
      .set(bearer(subscriber.key))
      .send({ event_ids: followed })
      .expect(200);
    expect((res.body as { event_ids: string[] }).event_ids).toEqual(followed);
  };
  const feed = async (client: TestClient): Promise<FeedItem[]> =>
    (
      (await request(server).get('/v1/notifications?limit=500').set(bearer(client.key)).expect(200)).body as {
        items: FeedItem[];
      }
    ).items;
  const removalOf = async (eventId: bigint, ticketId: bigint): Promise<FeedItem> => {
    let found: FeedItem | undefined;
    await waitUntil(
      async () => {
        found = (await feed(subscriber)).find(
          (e) =>
            e.type === 'listing.removed' &&
            e.data.event_id === eventId.toString() &&
            e.data.ticket_id === ticketId.toString(),
        );
        return found !== undefined;
      },
      20_000,
      50,
    );
    if (!found) throw new Error('no listing.removed');
    return found;
  };

  it('event_ids: validated (u64 decimal strings, at most 100), shown by GET', async () => {
    for (const bad of [
      ['-1'],
      ['18446744073709551616'],
      [7],
      ['01'],
      Array.from({ length: 101 }, (_, i) => `${i}`),
    ]) {
      const res = await request(server)
        .patch(`/v1/webhooks/endpoints/${endpointId}`)
        .set(bearer(subscriber.key))
        .send({ event_ids: bad })
        .expect(400);
      expect(JSON.stringify(res.body)).toContain('event_ids');
    }
    const got = await request(server)
      .get(`/v1/webhooks/endpoints/${endpointId}`)
      .set(bearer(subscriber.key))
      .expect(200);
    expect((got.body as { event_ids: string[] }).event_ids).toEqual(['1']);
  });

  it('bought here → listing.removed reason sold, once', async () => {
    const { listing, buyer: wallet } = market(t.sandbox, 'catalog-sold');
    await follow(listing.eventId);
    await refreshMirror(t.app, listing.eventId);
    const posted = await postOrder(t.app, buyer.key, 'catalog-sold', orderBody(listing, wallet));
    expect(posted.status).toBe(202);
    expect((await waitFinal(t.app, buyer.key, posted.body.id, 30_000)).state).toBe('confirmed');
    const removed = await removalOf(listing.eventId, listing.ticketId);
    expect(removed).toMatchObject({ version: 1, data: { reason: 'sold', price_minor: '2500000' } });
    const mine = (await feed(subscriber)).filter((e) => e.data.event_id === listing.eventId.toString());
    expect(mine.map((e) => e.type)).toEqual(['listing.listed', 'listing.removed']);
  });

  it('cancelled here → reason cancelled; vanished upstream → gone_upstream', async () => {
    const ticket = seedTicket(t.sandbox, 'carol', false);
    await follow(ticket.eventId);
    const listed = await request(server)
      .post('/v1/listings')
      .set(bearer(seller.key))
      .set('idempotency-key', `catalog-list-${Date.now()}`)
      .send({
        seller_subject: 'carol',
        seller_address: t.sandbox.admin.userWalletAddress('carol'),
        event_id: ticket.eventId.toString(),
        ticket_id: ticket.ticketId.toString(),
        ask_price_minor: '18446744073709551615',
        payout_ata: t.sandbox.admin.userWalletAddress('carol-payout'),
        expires_at: String(Math.floor(t.sandbox.admin.now() / 1000) + 3600),
      })
      .expect(202);
    await waitForTx(server, seller.key, (listed.body as TxBody).custodialTransactionId, onFinal);
    const cancel = await request(server)
      .post(`/v1/listings/${ticket.eventId}/${ticket.ticketId}/cancel`)
      .set(bearer(seller.key))
      .set('idempotency-key', `catalog-cancel-${Date.now()}`)
      .send({ seller_subject: 'carol', seller_address: t.sandbox.admin.userWalletAddress('carol') })
      .expect(202);
    await waitForTx(server, seller.key, (cancel.body as TxBody).custodialTransactionId, onFinal);
    expect((await removalOf(ticket.eventId, ticket.ticketId)).data).toMatchObject({
      reason: 'cancelled',
      price_minor: '18446744073709551615',
    });

    // A listing that expires upstream: nobody here bought or cancelled it.
    const { eventId } = t.sandbox.admin.createEvent();
    const view = t.sandbox.admin.seedListing({
      eventId,
      seller: { kind: 'user', subject: 'dave' },
      askPriceMinor: 700n,
      expiresAt: BigInt(Math.floor(t.sandbox.admin.now() / 1000) + 60),
    });
    await follow(eventId);
    await refreshMirror(t.app, eventId);
    t.sandbox.admin.advanceTime(120_000);
    await refreshMirror(t.app, eventId);
    expect((await removalOf(eventId, BigInt(view.ticket_id))).data).toMatchObject({
      reason: 'gone_upstream',
    });
  });

  it('another client, and events nobody follows, get no catalog event', async () => {
    const theirs = await feed(bystander);
    expect(theirs.filter((e) => e.type.startsWith('listing.') || e.type.startsWith('event.'))).toEqual([]);
    const mine = (await feed(subscriber)).filter((e) => e.type !== 'sync.backfill_completed');
    expect(
      mine
        .filter((e) => e.type.startsWith('listing.'))
        .every((e) => followed.includes(String(e.data.event_id))),
    ).toBe(true);
    // The subscriber's filter names listing.listed/removed only: no event.* nor price_changed reached it.
    expect(new Set(mine.map((e) => e.type))).toEqual(new Set(['listing.listed', 'listing.removed']));
    const deliveries = await request(server)
      .get(`/v1/webhooks/endpoints/${endpointId}/deliveries?limit=100`)
      .set(bearer(subscriber.key))
      .expect(200);
    expect((deliveries.body as { items: unknown[] }).items.length).toBe(mine.length);
  });
});
