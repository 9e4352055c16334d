import { Webhook } from 'standardwebhooks';
import request from 'supertest';
import { DataSource } from 'typeorm';
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
import { waitUntil } from '../support/wait';
import { WebhookReceiver } from '../support/webhook-receiver';

interface Envelope {
  id: string;
  type: string;
  version: number;
  occurred_at: string;
  data: Record<string, unknown>;
}

/**
 * Issue 24: the state changes announce themselves. Orders, the ledger and sync passes write their events in the
 * transaction that makes the change (outbox triggers); a registered endpoint receives them signed, the feed
 * serves the same ids, and no event names a state its order did not reach.
 */
describe('Webhook events from orders, transactions and sync passes (e2e)', () => {
  let t: TestApp;
  let buyerClient: TestClient;
  let other: TestClient;
  let receiver: WebhookReceiver;
  let otherReceiver: WebhookReceiver;
  let secret = '';
  let db: DataSource;

  beforeAll(async () => {
    t = await startTestApp(
      { ...CHECKOUT_TEST_ENV, WEBHOOKS_WORKER_INTERVAL_MS: '50', RATE_LIMIT_DEFAULT: '100000' },
      { sandbox: { landingDelayMs: 20 } },
    );
    db = t.app.get(DataSource);
    buyerClient = await issueTestKey(t.app, ['orders:write', 'webhooks:write']);
    other = await issueTestKey(t.app, ['orders:write', 'webhooks:write']);
    receiver = await WebhookReceiver.start();
    otherReceiver = await WebhookReceiver.start();
    secret = (await register(buyerClient, receiver)).secret;
    await register(other, otherReceiver);
  });
  afterAll(async () => {
    await t?.close();
    await receiver?.close();
    await otherReceiver?.close();
  });

  async function register(client: TestClient, to: WebhookReceiver): Promise<{ id: string; secret: string }> {
    const res = await request(t.app.getHttpServer())
      .post('/v1/webhooks/endpoints')
      .set(bearer(client.key))
      .send({ url: to.url, description: 'events test' })
      .expect(201);
    return res.body as { id: string; secret: string };
  }

  /** The received events, verified with the endpoint's secret by the reference implementation. */
  const verified = (): Envelope[] =>
    receiver.received.map(
      (r) => new Webhook(secret).verify(r.body, r.headers as Record<string, string>) as Envelope,
    );

  const ofOrder = (id: string) => verified().filter((e) => e.data.order_id === id);

  it('a confirmed purchase: order.created, its state changes and order.confirmed arrive signed, in the feed too', async () => {
    const { listing, buyer } = market(t.sandbox, 'hook-buy');
    const posted = await postOrder(t.app, buyerClient.key, 'hook-buy', orderBody(listing, buyer));
    expect(posted.status).toBe(202);
    const done = await waitFinal(t.app, buyerClient.key, posted.body.id);
    expect(done.state).toBe('confirmed');
    await waitUntil(() => ofOrder(posted.body.id).some((e) => e.type === 'order.confirmed'), 10_000);

    // The feed serves the same events (same ids and payloads). It shows an event only below the cluster's snapshot
    // xmin (another test's open transaction holds it back), and an endpoint has up to 4 sends in flight, so the
    // receiver's arrival order is not the events' order: read both until they hold the same ids, then compare in
    // the feed's order.
    let feedOfOrder: Envelope[] = [];
    await waitUntil(async () => {
      const feed = await request(t.app.getHttpServer())
        .get('/v1/notifications?limit=100')
        .set(bearer(buyerClient.key))
        .expect(200);
      feedOfOrder = (feed.body.items as Envelope[]).filter((e) => e.data.order_id === posted.body.id);
      const received = new Set(ofOrder(posted.body.id).map((e) => e.id));
      return (
        feedOfOrder.some((e) => e.type === 'order.confirmed') &&
        feedOfOrder.length === received.size &&
        feedOfOrder.every((e) => received.has(e.id))
      );
    }, 15_000);
    const received = ofOrder(posted.body.id);
    const byId = new Map(received.map((e) => [e.id, e]));
    const events = feedOfOrder.map((e) => byId.get(e.id)).filter((e) => e !== undefined);
    expect(events).toEqual(feedOfOrder);
    expect(received).toHaveLength(feedOfOrder.length);

    expect(events[0]).toMatchObject({
      type: 'order.created',
      data: {
        state: 'created',
        buyer_subject: buyer.subject,
        event_id: listing.eventId.toString(),
        ticket_id: listing.ticketId.toString(),
        expected_price_minor: listing.askPriceMinor.toString(),
      },
    });
    const final = events.find((e) => e.type === 'order.confirmed');
    expect(final?.data).toEqual({
      order_id: posted.body.id,
      state: 'confirmed',
      attempt: 1,
      event_id: listing.eventId.toString(),
      ticket_id: listing.ticketId.toString(),
      price_minor: listing.askPriceMinor.toString(),
      failure: null,
      transaction_signature: done.transaction?.transaction_signature ?? null,
    });
    // Every state an event names is a state the order's audit trail shows it reached.
    const reached = new Set(done.steps?.map((s) => s.state));
    for (const e of events) expect(reached).toContain(e.data.state);
    expect(
      events.filter(
        (e) => e.type.startsWith('order.') && e.type !== 'order.created' && e.type !== 'order.state_changed',
      ),
    ).toHaveLength(1);
  });

  it('a rejected order announces order.rejected with its failure code; another client hears nothing of it', async () => {
    const { listing, buyer } = market(t.sandbox, 'hook-reject');
    const posted = await postOrder(
      t.app,
      buyerClient.key,
      'hook-reject',
      orderBody(listing, buyer, listing.askPriceMinor + 1n),
    );
    const done = await waitFinal(t.app, buyerClient.key, posted.body.id);
    expect(done.state).toBe('rejected');
    await waitUntil(() => ofOrder(posted.body.id).some((e) => e.type === 'order.rejected'), 10_000);
    const rejected = ofOrder(posted.body.id).find((e) => e.type === 'order.rejected');
    expect(rejected?.data).toMatchObject({
      state: 'rejected',
      failure: { code: 'PRICE_CHANGED' },
      price_minor: listing.askPriceMinor.toString(),
    });
    expect(otherReceiver.received.map((r) => r.body).join('\n')).not.toContain(posted.body.id);
  });

  it('an event and its state change commit together: a rolled-back change leaves no event', async () => {
    const { listing, buyer } = market(t.sandbox, 'hook-rollback');
    const posted = await postOrder(t.app, buyerClient.key, 'hook-rollback', orderBody(listing, buyer));
    await waitFinal(t.app, buyerClient.key, posted.body.id);
    const count = async (): Promise<number> =>
      Number(
        (
          await db.query<{ n: string }[]>(
            `SELECT count(*) AS n FROM outbox_events WHERE payload->>'order_id' = $1`,
            [posted.body.id],
          )
        )[0].n,
      );
    const before = await count();
    const runner = db.createQueryRunner();
    await runner.connect();
    try {
      await runner.startTransaction();
      await runner.query(`UPDATE orders SET state = 'failed' WHERE id = $1`, [posted.body.id]);
      expect(
        Number(
          (
            await runner.query(`SELECT count(*) AS n FROM outbox_events WHERE payload->>'order_id' = $1`, [
              posted.body.id,
            ])
          )[0].n,
        ),
      ).toBe(before + 1);
      await runner.rollbackTransaction();
    } finally {
      await runner.release();
    }
    expect(await count()).toBe(before);
  });

  it('a sync pass announces sync.pass_completed to an admin endpoint only', async () => {
    const admin = await issueTestKey(t.app, ['admin']);
    const adminReceiver = await WebhookReceiver.start();
    try {
      await register(admin, adminReceiver);
      const { listing } = market(t.sandbox, 'hook-sync');
      await refreshMirror(t.app, listing.eventId);
      await waitUntil(
        () => adminReceiver.received.some((r) => r.body.includes('"sync.pass_completed"')),
        10_000,
      );
      const event = adminReceiver.received
        .map((r) => JSON.parse(r.body) as Envelope)
        .find((e) => e.type === 'sync.pass_completed' && e.data.scope === listing.eventId.toString());
      expect(event?.data).toMatchObject({ resource: 'event_listings', scope: listing.eventId.toString() });
      expect(receiver.received.some((r) => r.body.includes('"sync.pass_'))).toBe(false);
    } finally {
      await adminReceiver.close();
    }
  });
});
