import { Client } from 'pg';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { startTestApp, type TestApp } from '../support/test-app';
import { seedTicket, waitForTx, type TxBody } from '../support/transactions-helpers';

const ENV = {
  TX_TRACKER_INTERVAL_MS: '50',
  TX_RESUBMIT_BASE_DELAY_MS: '50',
  TX_RESUBMIT_MAX_DELAY_MS: '200',
  RATE_LIMIT_LISTINGS_WRITE: '100000',
};

describe('Selling: list and cancel (e2e, against the sandbox)', () => {
  let t: TestApp;
  let seller: TestClient;
  let server: ReturnType<TestApp['app']['getHttpServer']>;
  let n = 0;
  const key = (): string => `sell-${++n}-${Date.now()}`;

  let db: Client;
  beforeAll(async () => {
    t = await startTestApp(ENV, { sandbox: { landingDelayMs: 100 } });
    server = t.app.getHttpServer();
    seller = await issueTestKey(t.app, ['listings:write', 'transactions:write']);
    db = new Client({ connectionString: t.databaseUrl });
    await db.connect();
  });
  afterAll(async () => {
    await db?.end();
    await t?.close();
  });

  /** The mirror's active rows for one event (catalog sync's `listings` table). */
  const mirrored = async (eventId: bigint): Promise<{ ticket_id: string; ask_price_minor: string }[]> =>
    (
      await db.query<{ ticket_id: string; ask_price_minor: string }>(
        `SELECT ticket_id::text, ask_price_minor::text FROM listings WHERE event_id = $1 AND removed_at IS NULL`,
        [eventId.toString()],
      )
    ).rows;

  const listingBody = (
    ticket: { eventId: bigint; ticketId: bigint },
    subject = 'bob',
  ): Record<string, unknown> => ({
    seller_subject: subject,
    seller_address: t.sandbox.admin.userWalletAddress(subject),
    event_id: ticket.eventId.toString(),
    ticket_id: ticket.ticketId.toString(),
    ask_price_minor: '18446744073709551615',
    payout_ata: t.sandbox.admin.userWalletAddress(`${subject}-payout`),
    expires_at: String(Math.floor(t.sandbox.admin.now() / 1000) + 3600),
  });
  const list = (body: unknown, idempotencyKey: string | undefined = key()): request.Test => {
    const req = request(server).post('/v1/listings').set(bearer(seller.key));
    if (idempotencyKey !== undefined) void req.set('idempotency-key', idempotencyKey);
    return req.send(body as object);
  };

  const fields = async (body: unknown, idem?: string): Promise<string[]> => {
    const res = await list(body, idem).expect(400);
    return (res.body.error.details as { field: string }[]).map((d) => d.field).sort();
  };

  const generation = async (): Promise<string> =>
    (await db.query<{ g: string }>(`SELECT generation::text AS g FROM mirror_generation`)).rows[0]?.g ??
    'none';

  it('lists a ticket: 202 with the record, confirmed on the ledger with integrator addresses from the protocol config', async () => {
    const ticket = seedTicket(t.sandbox, 'bob', false);
    const res = await list(listingBody(ticket)).expect(202);
    const tx = res.body as TxBody & { instruction: string };
    expect(tx).toMatchObject({ instruction: 'list_ticket_v2', phase: 'signed', final: false });
    const done = await waitForTx(server, seller.key, tx.custodialTransactionId, (x) =>
      Boolean(x.final && x.history?.some((h) => h.type === 'on_final')),
    );
    expect(done.status).toBe('confirmed');
    const listing = t.sandbox.admin.listing(ticket.eventId, ticket.ticketId);
    expect(listing).toMatchObject({
      ask_price_minor: '18446744073709551615',
      listing_integrator_authority: t.sandbox.admin.integratorWalletAddress('sandbox-integrator'),
    });
    // The after-final handler refreshed the event: the listing is in the mirror, price exact.
    expect(await mirrored(ticket.eventId)).toEqual([
      { ticket_id: ticket.ticketId.toString(), ask_price_minor: '18446744073709551615' },
    ]);

    const cancel = await request(server)
      .post(`/v1/listings/${ticket.eventId}/${ticket.ticketId}/cancel`)
      .set(bearer(seller.key))
      .set('idempotency-key', key())
      .send({ seller_subject: 'bob', seller_address: t.sandbox.admin.userWalletAddress('bob') });
    expect(cancel.body as unknown).toMatchObject({ instruction: 'cancel_listing_v1' });
    expect(cancel.status).toBe(202);
    const cancelled = await waitForTx(
      server,
      seller.key,
      (cancel.body as TxBody).custodialTransactionId,
      (x) => Boolean(x.final && x.history?.some((h) => h.type === 'on_final')),
    );
    expect(cancelled.status).toBe('confirmed');
    expect(t.sandbox.admin.listing(ticket.eventId, ticket.ticketId)).toBeUndefined();
    expect(await mirrored(ticket.eventId)).toEqual([]);
  });

  it('replays the same listing request with Idempotent-Replayed and signs nothing new', async () => {
    const ticket = seedTicket(t.sandbox, 'bob', false);
    const body = listingBody(ticket);
    const k = key();
    const first = (await list(body, k).expect(202)).body as TxBody;
    const before = t.sandbox.admin.stats().transactions;
    const again = await list(body, k).expect(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect((again.body as TxBody).custodialTransactionId).toBe(first.custodialTransactionId);
    expect(t.sandbox.admin.stats().transactions).toBe(before);
    // Until its mirror refresh ran too, so later tests see a quiet mirror.
    await waitForTx(server, seller.key, first.custodialTransactionId, (x) =>
      Boolean(x.final && x.history?.some((h) => h.type === 'on_final')),
    );
  });

  it('a listing that fails to land is recorded with its reason and leaves the ledger unchanged', async () => {
    const ticket = seedTicket(t.sandbox, 'carol', false); // owned by carol, listed as bob
    const before = await generation();
    const res = await list(listingBody(ticket, 'bob')).expect(202);
    const done = await waitForTx(server, seller.key, (res.body as TxBody).custodialTransactionId, (x) =>
      Boolean(x.final && x.history?.some((h) => h.type === 'on_final')),
    );
    expect(done).toMatchObject({ status: 'landed_with_error' });
    expect(done.failureReason).toContain('seller does not own the ticket');
    expect(t.sandbox.admin.listing(ticket.eventId, ticket.ticketId)).toBeUndefined();
    // Not confirmed: no refresh, the mirror is unchanged.
    expect(await mirrored(ticket.eventId)).toEqual([]);
    expect(await generation()).toBe(before);
  });

  it('rejects bad input with 400 naming the field before anything goes upstream', async () => {
    const ticket = seedTicket(t.sandbox, 'bob', false);
    const good = listingBody(ticket);
    const before = t.sandbox.admin.stats().transactions;
    const now = Math.floor(t.sandbox.admin.now() / 1000);
    expect(await fields({ ...good, expires_at: String(now - 10) })).toEqual(['expires_at']);
    expect(await fields({ ...good, expires_at: String(now + 400 * 86_400) })).toEqual(['expires_at']);
    expect(await fields({ ...good, expires_at: '1.5' })).toEqual(['expires_at']);
    expect(await fields({ ...good, event_id: '-1', ask_price_minor: '0' })).toEqual([
      'ask_price_minor',
      'event_id',
    ]);
    expect(await fields({ ...good, listing_integrator_authority: good.seller_address })).toEqual([
      'listing_integrator_authority',
    ]);
    expect(await fields(good, 'x'.repeat(256))).toEqual(['Idempotency-Key']);
    await request(server)
      .post('/v1/listings/abc/1/cancel')
      .set(bearer(seller.key))
      .set('idempotency-key', key())
      .send({ seller_subject: 'bob', seller_address: good.seller_address })
      .expect(400);
    expect(t.sandbox.admin.stats().transactions).toBe(before);
  });
});
