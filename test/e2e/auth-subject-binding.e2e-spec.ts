import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import { CHECKOUT_TEST_ENV, orderBody, postOrder, waitFinal } from '../support/checkout-helpers';
import { fundedBuyer, seedListing } from '../support/market';
import { startTestApp, type TestApp } from '../support/test-app';
import { seedTicket, signUser, type TxBody } from '../support/transactions-helpers';

const WRITE_SCOPES = ['orders:write', 'listings:write', 'transactions:write'];
/** The binding of the bound key: user subjects `acme-…` and `solo`; the integrator subject `acme`. */
const BINDING = { userSubjects: ['acme-*', 'solo'], integratorSubjects: ['acme'] };

interface ErrorBody {
  error: { code: string; message: string; details?: unknown };
}

/** A 403 SUBJECT_NOT_ALLOWED naming `field` (and never more). */
const refusal = (res: { status: number; body: unknown }, field: string): void => {
  expect(res.status).toBe(403);
  const { error } = res.body as ErrorBody;
  expect(error.code).toBe('SUBJECT_NOT_ALLOWED');
  expect(error.details).toEqual({ field });
  expect(error.message).toContain(field);
};

/** A cancel_listing_v1 batch signed by `canceller`'s wallet. */
const cancelBatch = (canceller: string, ticket: { eventId: bigint; ticketId: bigint }) => ({
  platformInstructions: {
    instruction: 'cancel_listing_v1',
    params: [{ event_id: ticket.eventId.toString(), ticket_id: ticket.ticketId.toString(), canceller }],
  },
});

describe('API keys bound to subjects (e2e)', () => {
  let t: TestApp;
  let admin: TestClient;
  let bound: { id: string; key: string };
  let unbound: TestClient;
  let server: ReturnType<TestApp['app']['getHttpServer']>;
  let n = 0;
  const idem = (): string => `bind-${++n}-${Date.now()}`;

  beforeAll(async () => {
    t = await startTestApp(
      {
        ...CHECKOUT_TEST_ENV,
        RATE_LIMIT_LISTINGS_WRITE: '100000',
        RATE_LIMIT_TRANSACTIONS_WRITE: '100000',
      },
      { sandbox: { landingDelayMs: 50 } },
    );
    server = t.app.getHttpServer();
    admin = await issueTestKey(t.app, ['admin']);
    const created = await request(server)
      .post('/v1/admin/api-clients')
      .set(bearer(admin.key))
      .send({ name: 'bound-partner', scopes: WRITE_SCOPES, binding: BINDING });
    if (created.status !== 201) throw new Error(`issuing the bound key: ${created.status}`);
    bound = created.body as { id: string; key: string };
    unbound = await issueTestKey(t.app, ['orders:write', 'listings:write', 'transactions:write']);
  });
  afterAll(async () => {
    await t?.close();
  });

  const listingBody = (ticket: { eventId: bigint; ticketId: bigint }, subject: string) => ({
    seller_subject: subject,
    seller_address: t.sandbox.admin.userWalletAddress(subject),
    event_id: ticket.eventId.toString(),
    ticket_id: ticket.ticketId.toString(),
    ask_price_minor: '1000000',
    payout_ata: t.sandbox.admin.userWalletAddress(`${subject}-payout`),
    expires_at: String(Math.floor(t.sandbox.admin.now() / 1000) + 3600),
  });
  const sell = (key: string, body: unknown): request.Test =>
    request(server)
      .post('/v1/listings')
      .set(bearer(key))
      .set('idempotency-key', idem())
      .send(body as object);
  const cancel = (
    key: string,
    ticket: { eventId: bigint; ticketId: bigint },
    subject: string,
  ): request.Test =>
    request(server)
      .post(`/v1/listings/${ticket.eventId}/${ticket.ticketId}/cancel`)
      .set(bearer(key))
      .set('idempotency-key', idem())
      .send({ seller_subject: subject, seller_address: t.sandbox.admin.userWalletAddress(subject) });
  const signIntegrator = (key: string, subject: string, body: unknown): request.Test =>
    request(server)
      .post(`/v1/wallets/integrators/${encodeURIComponent(subject)}/signatures`)
      .set(bearer(key))
      .set('idempotency-key', idem())
      .send(body as object);

  it('the admin API issues a bound key and shows its binding on create, get, list and /v1/me; unbound keys show null', async () => {
    const created = await request(server)
      .post('/v1/admin/api-clients')
      .set(bearer(admin.key))
      .send({ name: 'bound-shown', scopes: ['orders:write'], binding: { userSubjects: ['shop-*'] } })
      .expect(201);
    const shown = { userSubjects: ['shop-*'], integratorSubjects: [] };
    expect(created.body.binding).toEqual(shown);
    const one = await request(server)
      .get(`/v1/admin/api-clients/${created.body.id}`)
      .set(bearer(admin.key))
      .expect(200);
    expect(one.body.binding).toEqual(shown);
    const list = await request(server).get('/v1/admin/api-clients').set(bearer(admin.key)).expect(200);
    const rows = list.body.items as { id: string; binding: unknown }[];
    expect(rows.find((r) => r.id === created.body.id)?.binding).toEqual(shown);
    expect(rows.find((r) => r.id === bound.id)?.binding).toEqual(BINDING);
    const me = await request(server).get('/v1/me').set(bearer(created.body.key)).expect(200);
    expect(me.body.binding).toEqual(shown);

    expect([created.body.anySubject, me.body.anySubject]).toEqual([false, false]);

    const plain = await request(server)
      .post('/v1/admin/api-clients')
      .set(bearer(admin.key))
      .send({ name: 'unbound-shown', scopes: ['orders:write'], anySubject: true })
      .expect(201);
    expect([plain.body.binding, plain.body.anySubject]).toEqual([null, true]);
    const plainMe = await request(server).get('/v1/me').set(bearer(plain.body.key)).expect(200);
    expect([plainMe.body.binding, plainMe.body.anySubject]).toEqual([null, true]);
    const listed = await request(server)
      .get('/v1/admin/api-clients?limit=100')
      .set(bearer(admin.key))
      .expect(200);
    const row = (listed.body.items as { id: string; anySubject: boolean }[]).find(
      (r) => r.id === plain.body.id,
    );
    expect(row?.anySubject).toBe(true);
  });

  it('a non-admin write key with neither a binding nor anySubject: true is 400 naming binding; nothing is issued (issue 31 item 3)', async () => {
    const before = (await request(server).get('/v1/admin/api-clients?limit=100').set(bearer(admin.key))).body
      .items.length as number;
    for (const scopes of [
      ['orders:write'],
      ['listings:write'],
      ['transactions:write'],
      ['catalog:read', 'orders:write'],
    ]) {
      for (const extra of [{}, { binding: null }, { anySubject: false }]) {
        const res = await request(server)
          .post('/v1/admin/api-clients')
          .set(bearer(admin.key))
          .send({ name: 'unbound-by-default', scopes, ...extra });
        expect([scopes, extra, res.status]).toEqual([scopes, extra, 400]);
        expect(((res.body as ErrorBody).error.details as { field: string }[]).map((d) => d.field)).toEqual([
          'binding',
        ]);
      }
    }
    const both = await request(server)
      .post('/v1/admin/api-clients')
      .set(bearer(admin.key))
      .send({ name: 'both', scopes: ['orders:write'], binding: { userSubjects: ['a'] }, anySubject: true });
    expect(both.status).toBe(400);
    expect(((both.body as ErrorBody).error.details as { field: string }[]).map((d) => d.field)).toEqual([
      'anySubject',
    ]);
    const after = (await request(server).get('/v1/admin/api-clients?limit=100').set(bearer(admin.key))).body
      .items.length as number;
    expect(after).toBe(before);
    // Keys that act for no subject, and admin keys, need neither.
    for (const scopes of [['catalog:read'], ['webhooks:write'], ['admin']])
      await request(server)
        .post('/v1/admin/api-clients')
        .set(bearer(admin.key))
        .send({ name: 'no-subject-scope', scopes })
        .expect(201);
  });

  it('a subject outside the safe set is 400 naming its field, bound key or not, and nothing reaches the upstream (issue 31 item 3)', async () => {
    const signedBefore = t.sandbox.admin.stats().transactions;
    const listing = seedListing(t.sandbox, { seller: 'bind-seller-safe', askPriceMinor: 1_000_000n });
    for (const key of [bound.key, unbound.key]) {
      for (const subject of ['acme-x/../mallory', 'acme-%2F', 'acme-..', 'acme x']) {
        const order = await postOrder(t.app, key, idem(), {
          ...orderBody(listing, fundedBuyer(t.sandbox, 'acme-safe', 0n)),
          buyer_subject: subject,
        });
        expect([subject, order.status]).toEqual([subject, 400]);
        expect(JSON.stringify(order.body.error?.details)).toContain('buyer_subject');
        const sold = await sell(key, {
          ...listingBody(seedTicket(t.sandbox, 'acme-safe', false), 'acme-safe'),
          seller_subject: subject,
        });
        expect([subject, sold.status]).toEqual([subject, 400]);
        expect(JSON.stringify((sold.body as ErrorBody).error.details)).toContain('seller_subject');
        const signed = await signUser(
          server,
          key,
          subject,
          idem(),
          cancelBatch('x', { eventId: 1n, ticketId: 1n }),
        );
        expect([subject, signed.status]).toEqual([subject, 400]);
        expect(JSON.stringify((signed.body as ErrorBody).error.details)).toContain('subject');
      }
    }
    expect(t.sandbox.admin.stats().transactions).toBe(signedBefore);
  });

  it('a binding pattern that is not a subject or a prefix with one trailing * is 400 naming it; nothing is issued', async () => {
    const before = (await request(server).get('/v1/admin/api-clients?limit=100').set(bearer(admin.key))).body
      .items.length as number;
    for (const [binding, field] of [
      [{ userSubjects: ['a*b'] }, 'binding.userSubjects'],
      [{ userSubjects: ['ok', '**'] }, 'binding.userSubjects'],
      [{ userSubjects: [''] }, 'binding.userSubjects'],
      [{ userSubjects: ['a\u0000'] }, 'binding.userSubjects'],
      [{ integratorSubjects: ['x'.repeat(300)] }, 'binding.integratorSubjects'],
      [{ integratorSubjects: 'acme' }, 'binding.integratorSubjects'],
      [{ userSubjects: ['a'], other: ['b'] }, 'binding.other'],
      ['acme-*', 'binding'],
    ] as const) {
      const res = await request(server)
        .post('/v1/admin/api-clients')
        .set(bearer(admin.key))
        .send({ name: 'bad-binding', scopes: ['orders:write'], binding });
      expect([JSON.stringify(binding), res.status]).toEqual([JSON.stringify(binding), 400]);
      const details = (res.body as ErrorBody).error.details as { field: string }[];
      expect(details.map((d) => d.field)).toContain(field);
    }
    const after = (await request(server).get('/v1/admin/api-clients?limit=100').set(bearer(admin.key))).body
      .items.length as number;
    expect(after).toBe(before);
  });

  it('a binding on an admin key is 400 naming binding (an admin key could issue itself an unbound one)', async () => {
    const res = await request(server)
      .post('/v1/admin/api-clients')
      .set(bearer(admin.key))
      .send({ name: 'bound-admin', scopes: ['admin'], binding: { userSubjects: ['acme-*'] } });
    expect(res.status).toBe(400);
    expect(((res.body as ErrorBody).error.details as { field: string }[]).map((d) => d.field)).toEqual([
      'binding',
    ]);
  });

  it('checkout: a bound key ordering for a buyer outside its binding is 403 naming buyer_subject; nothing is stored or signed', async () => {
    const listing = seedListing(t.sandbox, { seller: 'bind-seller-1', askPriceMinor: 1_000_000n });
    const buyer = fundedBuyer(t.sandbox, 'mallory', 0n);
    const signedBefore = t.sandbox.admin.stats().transactions;
    const res = await postOrder(t.app, bound.key, idem(), orderBody(listing, buyer));
    refusal(res, 'buyer_subject');
    const orders = await request(server).get('/v1/orders').set(bearer(bound.key)).expect(200);
    expect(orders.body.items).toEqual([]);
    expect(t.sandbox.admin.stats().transactions).toBe(signedBefore);
  });

  it('checkout: a bound key orders for a buyer inside its binding (prefix and exact subject)', async () => {
    for (const subject of ['acme-buyer-1', 'solo']) {
      const listing = seedListing(t.sandbox, { seller: `bind-seller-${subject}`, askPriceMinor: 1_000_000n });
      const buyer = fundedBuyer(t.sandbox, subject, 0n);
      const res = await postOrder(t.app, bound.key, idem(), orderBody(listing, buyer));
      expect([subject, res.status]).toEqual([subject, 202]);
      expect(res.body.buyer.subject).toBe(subject);
      await waitFinal(t.app, bound.key, res.body.id);
    }
  });

  it('checkout: an unbound key orders for any buyer, as before', async () => {
    const listing = seedListing(t.sandbox, { seller: 'bind-seller-3', askPriceMinor: 1_000_000n });
    const buyer = fundedBuyer(t.sandbox, 'mallory-2', 0n);
    const res = await postOrder(t.app, unbound.key, idem(), orderBody(listing, buyer));
    expect(res.status).toBe(202);
    await waitFinal(t.app, unbound.key, res.body.id);
  });

  it('selling: a bound key listing or cancelling as a seller outside its binding is 403 naming seller_subject; nothing is signed', async () => {
    const unlisted = seedTicket(t.sandbox, 'mallory', false);
    const listed = seedTicket(t.sandbox, 'mallory', true);
    const signedBefore = t.sandbox.admin.stats().transactions;
    refusal(await sell(bound.key, listingBody(unlisted, 'mallory')), 'seller_subject');
    refusal(await cancel(bound.key, listed, 'mallory'), 'seller_subject');
    // Not a prefix match: `acme` alone is not `acme-…` (and is the integrator's subject, not a user's).
    refusal(await cancel(bound.key, listed, 'acme'), 'seller_subject');
    expect(t.sandbox.admin.stats().transactions).toBe(signedBefore);
    expect(t.sandbox.admin.listing(listed.eventId, listed.ticketId)).toBeDefined();
  });

  it('selling: a bound key lists and cancels as a seller inside its binding; an unbound key as any seller', async () => {
    const unlisted = seedTicket(t.sandbox, 'acme-seller', false);
    const listed = seedTicket(t.sandbox, 'acme-seller', true);
    const listedRes = await sell(bound.key, listingBody(unlisted, 'acme-seller'));
    expect(listedRes.status).toBe(202);
    expect((listedRes.body as { instruction: string }).instruction).toBe('list_ticket_v2');
    const cancelled = await cancel(bound.key, listed, 'acme-seller');
    expect(cancelled.status).toBe(202);
    expect((cancelled.body as { instruction: string }).instruction).toBe('cancel_listing_v1');

    const theirs = seedTicket(t.sandbox, 'mallory-3', true);
    expect((await cancel(unbound.key, theirs, 'mallory-3')).status).toBe(202);
  });

  it('transactions: a bound key signing as a user or an integrator outside its binding is 403 naming subject', async () => {
    const ticket = seedTicket(t.sandbox, 'mallory', true);
    const signedBefore = t.sandbox.admin.stats().transactions;
    const asUser = await signUser(
      server,
      bound.key,
      'mallory',
      idem(),
      cancelBatch(t.sandbox.admin.userWalletAddress('mallory'), ticket),
    );
    refusal(asUser, 'subject');
    // The user pattern `acme-*` does not open integrator wallets, nor `acme` user wallets.
    for (const subject of ['other-integrator', 'acme-1']) {
      const asIntegrator = await signIntegrator(
        bound.key,
        subject,
        cancelBatch(t.sandbox.admin.integratorWalletAddress(subject), ticket),
      );
      refusal(asIntegrator, 'subject');
    }
    expect(t.sandbox.admin.stats().transactions).toBe(signedBefore);
  });

  it('transactions: a bound key signs as a user and an integrator inside its binding; an unbound key as anyone', async () => {
    const ticket = seedTicket(t.sandbox, 'acme-signer', true);
    const asUser = await signUser(
      server,
      bound.key,
      'acme-signer',
      idem(),
      cancelBatch(t.sandbox.admin.userWalletAddress('acme-signer'), ticket),
    );
    expect(asUser.status).toBe(201);
    expect((asUser.body as TxBody).phase).toBe('signed');
    const asIntegrator = await signIntegrator(
      bound.key,
      'acme',
      cancelBatch(t.sandbox.admin.integratorWalletAddress('acme'), ticket),
    );
    expect(asIntegrator.status).toBe(201);

    const anyone = await signIntegrator(
      unbound.key,
      'other-integrator',
      cancelBatch(t.sandbox.admin.integratorWalletAddress('other-integrator'), ticket),
    );
    expect(anyone.status).toBe(201);
  });
});
