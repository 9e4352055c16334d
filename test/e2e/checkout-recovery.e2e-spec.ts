import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DataSource } from 'typeorm';
import { CheckoutDriver } from '../../src/checkout/checkout.driver';
import { transactionKey } from '../../src/checkout/checkout.context';
import { batchFromWire } from '../../src/checkout/checkout.integrator';
import { CheckoutWorker } from '../../src/checkout/checkout.worker';
import { TransactionsTracker } from '../../src/transactions/transactions.tracker';
import { TransactionsService, type SignInput } from '../../src/transactions/transactions.service';
import { UpstreamClient } from '../../src/upstream/upstream.client';
import { issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  CHECKOUT_TEST_ENV,
  getOrder,
  market,
  orderBody,
  postOrder,
  revalidatedMarket,
  waitFinal,
  ownerOf,
  type OrderBody,
  untilOwnedBy,
} from '../support/checkout-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { waitUntil } from '../support/wait';

/**
 * A crashed process leaves orders at a recovery point with a lease that nobody renews. These rows are written
 * as such a process would have left them (its upstream calls made, its next commit missing); the recovery
 * worker (driven tick by tick here, its timer off) must finish each with exactly one purchase.
 */
describe('Checkout recovery worker resumes orders left mid-way (e2e)', () => {
  let t: TestApp;
  let client: TestClient;
  let db: DataSource;

  beforeAll(async () => {
    t = await startTestApp(
      { ...CHECKOUT_TEST_ENV, CHECKOUT_WORKER_ENABLED: 'false', TX_TRACKER_ENABLED: 'false' },
      { sandbox: { landingDelayMs: 50 } },
    );
    client = await issueTestKey(t.app, ['orders:write']);
    db = t.app.get(DataSource);
  });
  afterAll(async () => {
    await t?.close();
  });

  /** An order row as a dead process left it: its lease expired, due now. */
  async function leftBehind(
    columns: Record<string, unknown>,
    listing: { eventId: bigint; ticketId: bigint; askPriceMinor: bigint },
    buyer: { subject: string; address: string },
  ): Promise<string> {
    const id = (columns.id as string | undefined) ?? randomUUID();
    const row: Record<string, unknown> = {
      id,
      client_id: client.id,
      // The attempt keys of the order (ledger and upstream) derive from it: revalidatedAttempt computes them alike.
      idempotency_key: `left-${id}`,
      attempt_keys: 'client_key',
      fingerprint: 'a'.repeat(64),
      buyer_subject: buyer.subject,
      buyer_address: buyer.address,
      event_id: listing.eventId.toString(),
      ticket_id: listing.ticketId.toString(),
      expected_price_minor: listing.askPriceMinor.toString(),
      lease_owner: 'dead-process',
      lease_until: new Date(Date.now() - 1000),
      next_attempt_at: new Date(Date.now() - 1000),
      ...columns,
    };
    const names = Object.keys(row);
    await db.query(
      `INSERT INTO orders (${names.join(', ')}) VALUES (${names.map((_, i) => `$${i + 1}`).join(', ')})`,
      names.map((k) => row[k]),
    );
    return id;
  }

  async function runWorkerUntilFinal(id: string): Promise<OrderBody> {
    const worker = t.app.get(CheckoutWorker);
    let order: OrderBody | undefined;
    await waitUntil(
      async () => {
        await worker.tick();
        order = (await getOrder(t.app, client.key, `/v1/orders/${id}?steps=true`)).body;
        return order.final && order.steps?.some((s) => s.step === 'mirror_refreshed') === true;
      },
      20_000,
      30,
    );
    return order as OrderBody;
  }

  /**
   * A fresh listing, its live revalidation (the batch), attempt 1's order id and upstream key, and the ledger's
   * signing request of that attempt as the driver makes it.
   */
  async function revalidatedAttempt(label: string) {
    const { listing, buyer, batch } = await revalidatedMarket(t.app, t.sandbox, label);
    const id = randomUUID();
    const order = {
      id,
      clientId: client.id,
      idempotencyKey: `left-${id}`,
      attempt: 1,
      attemptKeys: 'client_key' as const,
    };
    const key = t.app.get(CheckoutDriver).upstreamKey(order);
    const signInput: SignInput = {
      clientId: client.id,
      idempotencyKey: transactionKey(order),
      upstreamIdempotencyKey: key,
      kind: 'user',
      subject: buyer.subject,
      batch: batchFromWire(batch),
    };
    return { listing, buyer, batch, id, key, signInput };
  }

  /** Confirmed on attempt 1 with that transaction, and nothing signed upstream since `signedBefore`. */
  function expectConfirmedOn(done: OrderBody, custodialId: string | null, signedBefore: number): void {
    expect(done).toMatchObject({
      state: 'confirmed',
      attempt: 1,
      transaction: { custodial_transaction_id: custodialId },
    });
    expect(t.sandbox.admin.stats().transactions).toBe(signedBefore);
  }

  it('resumes from created (crash before revalidation)', async () => {
    const { listing, buyer } = market(t.sandbox, 'rec-created');
    const id = await leftBehind({ state: 'created', recovery_point: 'revalidate' }, listing, buyer);
    expect((await runWorkerUntilFinal(id)).state).toBe('confirmed');
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
  });

  it('resumes from signing after the upstream signed but before anything was committed: same key, one transaction', async () => {
    const { listing, buyer, batch, id, key } = await revalidatedAttempt('rec-signing');
    // The dead process's signing call reached the upstream (the transaction exists there).
    await t.app.get(UpstreamClient).signUserTransaction(buyer.subject, batchFromWire(batch), key);
    const signedBefore = t.sandbox.admin.stats().transactions;
    await leftBehind(
      {
        id,
        state: 'signing',
        recovery_point: 'sign',
        batch: JSON.stringify(batch),
        upstream_idempotency_key: key,
        stablecoin_decimals: 6,
      },
      listing,
      buyer,
    );
    expect((await runWorkerUntilFinal(id)).state).toBe('confirmed');
    expect(t.sandbox.admin.stats().transactions).toBe(signedBefore);
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
  });

  it('resumes an attempt the ledger recorded, signed and sent while the order committed nothing: same transaction, no new read', async () => {
    const { listing, buyer, id, signInput } = await revalidatedAttempt('rec-ledger-only');
    // What the dead process did after its revalidation and before any order commit (signAndSubmit): the
    // ledger's record of the attempt, the signature and the first submission. The purchase then landed.
    const { record } = await t.app.get(TransactionsService).signAndSend(signInput);
    await untilOwnedBy(t.sandbox, listing, buyer.address);
    const signedBefore = t.sandbox.admin.stats().transactions;
    const id2 = await leftBehind({ id, state: 'created', recovery_point: 'revalidate' }, listing, buyer);
    // A fresh live read would find the listing gone (bought by this very attempt) and reject the order.
    expectConfirmedOn(await runWorkerUntilFinal(id2), record.custodialTransactionId, signedBefore);
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
  });

  it('resumes an attempt whose signing call left alongside the ledger insert that never committed: same key, same transaction', async () => {
    const { listing, buyer, batch, id, key } = await revalidatedAttempt('rec-early-sign');
    // The dead process's signing call (made alongside the ledger's insert) reached the upstream; the insert
    // and every order commit after `created` did not land.
    const early = await t.app
      .get(UpstreamClient)
      .signUserTransaction(buyer.subject, batchFromWire(batch), key);
    const signedBefore = t.sandbox.admin.stats().transactions;
    await leftBehind({ id, state: 'created', recovery_point: 'revalidate' }, listing, buyer);
    // A new read, the same batch, the same key: the upstream returns the transaction it already signed.
    expectConfirmedOn(await runWorkerUntilFinal(id), early.custodialTransactionId, signedBefore);
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
  });

  it('when that key already holds another batch (the listing changed before the resume): looks the key up, then attempt 2 buys', async () => {
    const { listing, buyer, batch, id, key } = await revalidatedAttempt('rec-key-held');
    const other = await revalidatedAttempt('rec-key-held-other');
    // What the dead process signed under this attempt's key: a batch this resume will not build again.
    const otherBatch = batchFromWire({
      ...other.batch,
      params: [{ ...(other.batch.params as Record<string, unknown>[])[0], buyer: buyer.address }],
    });
    const held = await t.app.get(UpstreamClient).signUserTransaction(buyer.subject, otherBatch, key);
    expect(batchFromWire(batch)).not.toEqual(otherBatch);
    await leftBehind({ id, state: 'created', recovery_point: 'revalidate' }, listing, buyer);
    const worker = t.app.get(CheckoutWorker);
    // The signing answers 409; the attempt is looked up by key: `signed` decides nothing until it expires.
    await waitUntil(
      async () => {
        await worker.tick();
        const order = (await getOrder(t.app, client.key, `/v1/orders/${id}`)).body;
        return order.state === 'signing' && order.attempt === 1;
      },
      5_000,
      30,
    );
    const looked = await db.query<{ recovery_point: string }[]>(
      'SELECT recovery_point FROM orders WHERE id = $1',
      [id],
    );
    expect(looked[0].recovery_point).toBe('lookup');
    t.sandbox.admin.advanceTime(61_000);
    const done = await runWorkerUntilFinal(id);
    expect(done).toMatchObject({ state: 'confirmed', attempt: 2 });
    expect(done.steps?.map((s) => s.step)).toEqual(expect.arrayContaining(['signing', 'new_attempt']));
    expect(done.transaction?.custodial_transaction_id).not.toBe(held.custodialTransactionId);
    expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
    // The other listing was never bought: what the key held was never submitted.
    expect(ownerOf(t.sandbox, other.listing.eventId, other.listing.ticketId)).not.toBe(buyer.address);
  });

  it('resumes from submitted (submission sent, status never read): tracks the same transaction to confirmed', async () => {
    const { listing, buyer, batch, id, key, signInput } = await revalidatedAttempt('rec-submitted');
    const transactions = t.app.get(TransactionsService);
    const { record } = await transactions.sign(signInput);
    await transactions.submit(record.custodialTransactionId ?? '', client.id);
    const signedBefore = t.sandbox.admin.stats().transactions;
    await leftBehind(
      {
        id,
        state: 'submitted',
        recovery_point: 'track',
        batch: JSON.stringify(batch),
        upstream_idempotency_key: key,
        transaction_record_id: record.id,
        custodial_transaction_id: record.custodialTransactionId,
        transaction_signature: record.feePayerSignature,
      },
      listing,
      buyer,
    );
    const done = await runWorkerUntilFinal(id);
    expect(done).toMatchObject({
      state: 'confirmed',
      transaction: { custodial_transaction_id: record.custodialTransactionId },
    });
    expect(t.sandbox.admin.stats().transactions).toBe(signedBefore);
  });

  it('resumes from expired: looks the attempt up by key first, then makes attempt 2', async () => {
    const { listing, buyer } = market(t.sandbox, 'rec-expired');
    const id = await leftBehind(
      { state: 'expired', recovery_point: 'lookup', upstream_idempotency_key: `never-used-${randomUUID()}` },
      listing,
      buyer,
    );
    const done = await runWorkerUntilFinal(id);
    expect(done).toMatchObject({ state: 'confirmed', attempt: 2 });
    expect(done.steps?.map((s) => s.step)).toContain('new_attempt');
  });

  it('a finished order is never claimed again', async () => {
    const { listing, buyer } = market(t.sandbox, 'rec-done');
    const id = await leftBehind(
      { state: 'rejected', recovery_point: 'done', next_attempt_at: null, failure_code: 'LISTING_GONE' },
      listing,
      buyer,
    );
    expect(await t.app.get(CheckoutWorker).tick()).toBe(0);
    expect((await getOrder(t.app, client.key, `/v1/orders/${id}`)).body.state).toBe('rejected');
  });

  // The after-final handler finds the order by the order_id the ledger keeps (ledger_transaction_orders); a
  // transaction written before that table (an attempt in flight across the upgrade) has none, and the handler
  // parses the order and attempt out of its key.
  it.each([
    { row: 'naming its order (order_id)', legacy: false },
    { row: 'from before ledger_transaction_orders (the key parsed)', legacy: true },
  ])(
    'an order closed as failed while its attempt’s transaction landed is reopened and confirmed by key: a ledger row $row',
    async ({ legacy }) => {
      const { listing, buyer } = market(t.sandbox, `rec-reopen-${legacy ? 'legacy' : 'id'}`);
      const posted = await postOrder(t.app, client.key, `reopen-${randomUUID()}`, orderBody(listing, buyer));
      const { id } = posted.body;
      expect((await waitFinal(t.app, client.key, id)).state).toBe('confirmed');
      // Another drive closed the order without ever recording this attempt's transaction (a stale drive's
      // submission it never saw), and the ledger's after-final handler has not run yet.
      const [{ transaction_record_id: recordId }] = await db.query<{ transaction_record_id: string }[]>(
        `SELECT transaction_record_id FROM orders WHERE id = $1`,
        [id],
      );
      await db.query(
        `UPDATE orders SET state = 'failed', recovery_point = 'done', failure_code = 'ATTEMPTS_EXHAUSTED',
         failure_reason = 'closed elsewhere', transaction_record_id = NULL, custodial_transaction_id = NULL,
         transaction_signature = NULL, upstream_status = NULL, next_attempt_at = NULL WHERE id = $1`,
        [id],
      );
      const [{ order_id: orderId }] = await db.query<{ order_id: string | null }[]>(
        `SELECT order_id FROM ledger_transaction_orders WHERE transaction_id = $1`,
        [recordId],
      );
      expect(orderId).toBe(id);
      if (legacy)
        await db.query(`DELETE FROM ledger_transaction_orders WHERE transaction_id = $1`, [recordId]);
      await db.query(
        `UPDATE ledger_transactions SET on_final_done_at = NULL, next_attempt_at = clock_timestamp() WHERE id = $1`,
        [recordId],
      );
      expect(await t.app.get(TransactionsTracker).tick()).toBeGreaterThanOrEqual(1);
      // The tracker's work runs in the background: the after-final handler reopens the order, then it is driven.
      await waitUntil(
        async () =>
          (await getOrder(t.app, client.key, `/v1/orders/${id}?steps=true`)).body.steps?.some(
            (s) => s.step === 'reopened',
          ) === true,
        10_000,
        30,
      );
      const done = await runWorkerUntilFinal(id);
      expect(done).toMatchObject({ state: 'confirmed', attempt: 1, failure: null });
      expect(done.steps?.map((s) => s.step)).toEqual(expect.arrayContaining(['reopened', 'confirmed']));
      expect(ownerOf(t.sandbox, listing.eventId, listing.ticketId)).toBe(buyer.address);
    },
  );
});
