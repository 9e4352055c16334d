import request from 'supertest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { canonicalBatchJson } from '../../src/transactions/instruction-batch.parser';
import { UpstreamClient } from '../../src/upstream/upstream.client';
import type { InstructionBatch } from '../../src/upstream/upstream.types';
import { bearer, issueTestKey, type TestClient } from '../support/auth-helpers';
import {
  acceptOfferBatch,
  activeListingsOf,
  cancelListingBatch,
  fundedBuyer,
  integratorOf,
  listTicketBatch,
  userWallet,
  type Integrator,
} from '../support/market';
import { startTestApp, type TestApp } from '../support/test-app';
import { signUser, waitForTx, type TxBody } from '../support/transactions-helpers';
import { waitUntil } from '../support/wait';

const ENV = {
  TX_TRACKER_INTERVAL_MS: '50',
  TX_RESUBMIT_BASE_DELAY_MS: '50',
  TX_RESUBMIT_MAX_DELAY_MS: '200',
  // One attempt per upstream call: an injected listings fault fails one refresh pass, no more.
  UPSTREAM_MAX_ATTEMPTS: '1',
  UPSTREAM_BREAKER_THRESHOLD: '1000',
  RATE_LIMIT_TRANSACTIONS_WRITE: '100000',
  RATE_LIMIT_CATALOG_READ: '100000',
  // No scheduled sync pass on this app (startTestApp's default, spelt out): only the after-final refresh
  // can bring a ledger change into the mirror.
  SYNC_ENABLED: 'false',
};

/** How long after `confirmed` the mirror may take to show the change (the refresh runs on the tracker). */
const READ_YOUR_WRITES_MS = 5_000;

/**
 * Read-your-writes through the raw signing routes (issue 23, item 3): a transaction signed through
 * `POST /v1/wallets/users/{subject}/signatures` and submitted through `POST /v1/transactions/submissions` that
 * lists, cancels or buys refreshes the events it touches once it is confirmed, as the selling routes do.
 */
describe('Transactions: raw signing routes refresh the mirror on confirmation (e2e)', () => {
  let t: TestApp;
  let client: TestClient;
  let admin: TestClient;
  let server: ReturnType<TestApp['app']['getHttpServer']>;
  let integrator: Integrator;
  let n = 0;
  const key = (): string => `ryw-${++n}-${Date.now()}`;

  beforeAll(async () => {
    t = await startTestApp(ENV, { sandbox: { landingDelayMs: 100 } });
    server = t.app.getHttpServer();
    client = await issueTestKey(t.app, ['transactions:write', 'catalog:read']);
    admin = await issueTestKey(t.app, ['admin']);
    integrator = await integratorOf(t.app.get(UpstreamClient));
  });
  afterAll(async () => {
    await t?.close();
  });

  /** A new upstream event brought into the mirror by an operator's events pass (the read API knows it). */
  const mirroredEvent = async (): Promise<bigint> => {
    const { eventId } = t.sandbox.admin.createEvent();
    const started = await request(server)
      .post('/v1/admin/sync')
      .set(bearer(admin.key))
      .send({ resource: 'events' })
      .expect(202);
    await waitUntil(async () => {
      const res = await request(server).get(`/v1/admin/sync/${started.body.passId}`).set(bearer(admin.key));
      return res.body.status === 'completed';
    }, 20_000);
    await request(server).get(`/v1/events/${eventId}`).set(bearer(client.key)).expect(200);
    return eventId;
  };

  /** The event's listings as the read API serves them: ticket id → price (exact minor units). */
  const readListings = async (eventId: bigint): Promise<Map<string, string>> => {
    const res = await request(server)
      .get(`/v1/events/${eventId}/listings?limit=100`)
      .set(bearer(client.key))
      .expect(200);
    const items = res.body.items as { ticket_id: string; price: { minor: string } }[];
    return new Map(items.map((i) => [i.ticket_id, i.price.minor]));
  };

  /** Signs `batch` through the raw user route, submits it through the contract-shaped route, waits for final. */
  const signSubmitConfirm = async (subject: string, batch: InstructionBatch): Promise<TxBody> => {
    const body = JSON.parse(canonicalBatchJson(batch)) as unknown;
    const signed = (await signUser(server, client.key, subject, key(), body).expect(201)).body as TxBody;
    await request(server)
      .post('/v1/transactions/submissions')
      .set(bearer(client.key))
      .send({ signedTransaction: signed.signedTransaction })
      .expect(200);
    const done = await waitForTx(server, client.key, signed.custodialTransactionId, (x) => x.final);
    expect(done).toMatchObject({ status: 'confirmed' });
    return done;
  };

  const listBatch = (seller: string, eventId: bigint, ticketId: bigint, price: bigint): InstructionBatch =>
    listTicketBatch({
      seller: userWallet(t.sandbox, seller),
      eventId,
      ticketId,
      askPriceMinor: price,
      payout: t.sandbox.admin.userWalletAddress(`${seller}-payout`),
      expiresAtUnixSeconds: BigInt(Math.floor(t.sandbox.admin.now() / 1000) + 3600),
      integrator,
    });

  /** Waits (bounded) until the read API shows `expected` for the ticket: its price, or absent (null). */
  const seeInMirror = (eventId: bigint, ticketId: bigint, expected: string | null): Promise<number> =>
    waitUntil(
      async () => ((await readListings(eventId)).get(ticketId.toString()) ?? null) === expected,
      READ_YOUR_WRITES_MS,
    );

  it('a confirmed list_ticket_v2 shows in the read API within seconds, and a confirmed cancel_listing_v1 takes it out', async () => {
    const eventId = await mirroredEvent();
    const ticket = t.sandbox.admin.mintTicket({ eventId, owner: { kind: 'user', subject: 'dana' } });
    const ticketId = BigInt(ticket.ticket_id);
    expect(await readListings(eventId)).toEqual(new Map());

    const listed = await signSubmitConfirm(
      'dana',
      listBatch('dana', eventId, ticketId, 18_446_744_073_709_551_615n),
    );
    expect(t.sandbox.admin.listing(eventId, ticketId)).toBeDefined();
    await seeInMirror(eventId, ticketId, '18446744073709551615');
    // The refresh ran as the record's after-final handler, once, and finished.
    const history = (
      await waitForTx(server, client.key, listed.custodialTransactionId, (x) =>
        Boolean(x.history?.some((h) => h.type === 'on_final')),
      )
    ).history;
    expect(history?.filter((h) => h.type === 'on_final').map((h) => h.detail)).toEqual(['done']);

    await signSubmitConfirm('dana', cancelListingBatch(eventId, ticketId, userWallet(t.sandbox, 'dana')));
    expect(t.sandbox.admin.listing(eventId, ticketId)).toBeUndefined();
    await seeInMirror(eventId, ticketId, null);
  });

  it('a confirmed accept_offer_v2 (a buy through the raw route) takes the listing out of the read API within seconds', async () => {
    const eventId = await mirroredEvent();
    const ticket = t.sandbox.admin.mintTicket({ eventId, owner: { kind: 'user', subject: 'erin' } });
    const ticketId = BigInt(ticket.ticket_id);
    await signSubmitConfirm('erin', listBatch('erin', eventId, ticketId, 2_500_000n));
    await seeInMirror(eventId, ticketId, '2500000');

    const buyer = fundedBuyer(t.sandbox, 'frank', 10_000_000n);
    const live = (await activeListingsOf(t.app.get(UpstreamClient), eventId)).find(
      (l) => l.ticketId === ticketId,
    );
    if (!live) throw new Error('the listing is not on the upstream');
    await signSubmitConfirm('frank', acceptOfferBatch(live, buyer, integrator));
    expect(t.sandbox.admin.ticket(eventId, ticketId)?.owner).toBe(buyer.address);
    await seeInMirror(eventId, ticketId, null);
  });

  it('a refresh that fails (the upstream walk fails) is retried until the mirror shows the change', async () => {
    const eventId = await mirroredEvent();
    const ticket = t.sandbox.admin.mintTicket({ eventId, owner: { kind: 'user', subject: 'gina' } });
    const ticketId = BigInt(ticket.ticket_id);
    // The next two listing walks fail: the first refresh passes end `failed`, which is not a refresh.
    t.sandbox.admin.addFault({ operation: 'listings', kind: 'error', times: 2 });
    const listed = await signSubmitConfirm('gina', listBatch('gina', eventId, ticketId, 3_000_000n));
    await seeInMirror(eventId, ticketId, '3000000');
    const done = await waitForTx(server, client.key, listed.custodialTransactionId, (x) =>
      Boolean(x.history?.some((h) => h.type === 'on_final' && h.detail === 'done')),
    );
    const runs = done.history?.filter((h) => h.type === 'on_final').map((h) => h.detail ?? '') ?? [];
    expect(runs.at(-1)).toBe('done');
    expect(runs.length).toBeGreaterThanOrEqual(2);
    expect(runs.slice(0, -1).every((d) => d !== 'done')).toBe(true);
    expect(t.sandbox.admin.faults()).toEqual([]);
  });

  it('a refresh that keeps failing is given up after a bounded number of tries, visibly; the record stays confirmed', async () => {
    const eventId = await mirroredEvent();
    const ticket = t.sandbox.admin.mintTicket({ eventId, owner: { kind: 'user', subject: 'hugo' } });
    t.sandbox.admin.addFault({ operation: 'listings', kind: 'error' });
    try {
      const listed = await signSubmitConfirm(
        'hugo',
        listBatch('hugo', eventId, BigInt(ticket.ticket_id), 4_000_000n),
      );
      const gaveUp = await waitForTx(
        server,
        client.key,
        listed.custodialTransactionId,
        (x) => Boolean(x.history?.some((h) => h.type === 'on_final' && /gave up/.test(h.detail ?? ''))),
        20_000,
      );
      expect(gaveUp).toMatchObject({ status: 'confirmed', final: true });
      expect(gaveUp.lastError).toMatch(/gave up/);
      const runs = gaveUp.history?.filter((h) => h.type === 'on_final') ?? [];
      // Bounded: a fixed number of tries, the last one recorded as the give-up, and no try after it.
      expect(runs.length).toBeGreaterThan(1);
      expect(runs.length).toBeLessThanOrEqual(10);
      expect(runs.every((h) => h.detail !== 'done')).toBe(true);
      await new Promise((r) => setTimeout(r, 1_000));
      const later = await waitForTx(server, client.key, listed.custodialTransactionId, () => true);
      expect(later.history?.filter((h) => h.type === 'on_final')).toHaveLength(runs.length);
    } finally {
      t.sandbox.admin.clearFaults();
    }
  }, 60_000);
});
