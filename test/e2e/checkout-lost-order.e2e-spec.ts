import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  CHECKOUT_TEST_ENV,
  getOrder,
  market,
  orderBody,
  ownerOf,
  postOrder,
  waitFinal,
} from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

/**
 * Issue 23, item 11: a lost order row must not buy twice. After a restore, or a failover to an asynchronous
 * standby, the service's database may have lost an order (and its ledger record) that the upstream already
 * signed, submitted, or even confirmed. The marketplace retries with the same Idempotency-Key; the retry makes a
 * new order, whose attempt must carry the same upstream idempotency key as the lost one's, so that the upstream
 * answers it with the first transaction: one purchase, and the retry reports it (confirmed, not LISTING_GONE).
 */
describe('Checkout after a lost order row: the same Idempotency-Key never buys twice (e2e)', () => {
  let t: TestApp;
  let client: TestClient;
  let db: DataSource;
  let n = 0;

  beforeAll(async () => {
    // Purchases land 1.5 s after their submission: long enough to lose the order while it is in flight.
    t = await startTestApp(CHECKOUT_TEST_ENV, { sandbox: { landingDelayMs: 1500 } });
    client = await issueTestKey(t.app, ['orders:write']);
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** The rows a restore from before the order would not have: the order, its steps, optionally its ledger record. */
  async function lose(orderId: string, ledgerToo: boolean): Promise<void> {
    await db.transaction(async (m) => {
      // As if never written: foreign keys are not checked for these deletes (the order's steps, the record's events).
      await m.query(`SET LOCAL session_replication_role = replica`);
      const [order] = await m.query<{ transaction_record_id: string | null }[]>(
        `SELECT transaction_record_id FROM orders WHERE id = $1`,
        [orderId],
      );
      await m.query(`DELETE FROM order_steps WHERE order_id = $1`, [orderId]);
      await m.query(`DELETE FROM orders WHERE id = $1`, [orderId]);
      if (ledgerToo) {
        const ids = await m.query<{ id: string }[]>(
          `SELECT id FROM ledger_transactions WHERE client_id = $1 AND (id = $2 OR idempotency_key LIKE 'checkout:%')
             AND id NOT IN (SELECT transaction_record_id FROM orders WHERE transaction_record_id IS NOT NULL)`,
          [client.id, order?.transaction_record_id ?? null],
        );
        for (const { id } of ids) {
          await m.query(`DELETE FROM ledger_transaction_events WHERE transaction_id = $1`, [id]);
          await m.query(`DELETE FROM ledger_transactions WHERE id = $1`, [id]);
        }
      }
    });
  }

  /** Purchases of this ticket the sandbox's ledger ever signed (whatever became of them). */
  const purchasesOf = (listing: { eventId: bigint; ticketId: bigint }) =>
    t.sandbox.admin
      .transactions({ instruction: 'accept_offer_v2' })
      .filter((tx) =>
        tx.items.some(
          (i) => i.event_id === listing.eventId.toString() && i.ticket_id === listing.ticketId.toString(),
        ),
      );

  async function scenario(lost: 'submitted' | 'confirmed', ledgerToo: boolean) {
    const { listing, buyer } = market(t.sandbox, `lost-${++n}`);
    const balanceBefore = t.sandbox.admin.balance({ kind: 'user', subject: buyer.subject });
    const key = `lost-order-${n}`;
    const first = await postOrder(t.app, client.key, key, orderBody(listing, buyer));
    expect(first.status).toBe(202);
    await waitUntil(async () => {
      const { body } = await getOrder(t.app, client.key, `/v1/orders/${first.body.id}`);
      return lost === 'submitted' ? body.state === 'submitted' : body.state === 'confirmed';
    }, 15_000);

    await lose(first.body.id, ledgerToo);
    const retry = await postOrder(t.app, client.key, key, orderBody(listing, buyer));
    expect(retry.status).toBe(202);
    expect(retry.body.id).not.toBe(first.body.id);

    const final = await waitFinal(t.app, client.key, retry.body.id);
    return {
      state: final.state,
      failure: final.failure,
      buyerOwnsTicket: ownerOf(t.sandbox, listing.eventId, listing.ticketId) === buyer.address,
      purchases: purchasesOf(listing).length,
      charged: balanceBefore - t.sandbox.admin.balance({ kind: 'user', subject: buyer.subject }),
      price: listing.askPriceMinor,
    };
  }

  /** Confirmed, the buyer owns the ticket, one purchase signed, charged the price once. */
  const ONE_PURCHASE = {
    state: 'confirmed',
    failure: null,
    buyerOwnsTicket: true,
    purchases: 1,
    charged: 2_500_000n,
    price: 2_500_000n,
  };

  it('the order lost while its purchase is in flight (its ledger record kept): one purchase, confirmed', async () => {
    expect(await scenario('submitted', false)).toEqual(ONE_PURCHASE);
  });

  it('the order and its ledger record lost while the purchase is in flight: one purchase, confirmed', async () => {
    expect(await scenario('submitted', true)).toEqual(ONE_PURCHASE);
  });

  it('the order and its ledger record lost after the purchase landed: confirmed, not LISTING_GONE', async () => {
    expect(await scenario('confirmed', true)).toEqual(ONE_PURCHASE);
  });
});
