import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import type { UpstreamClient } from '../../src/upstream/upstream.client';
import {
  acceptOfferBatch,
  activeListingsOf,
  cancelListingBatch,
  fundedBuyer,
  integratorOf,
  land,
  listTicketBatch,
  mintUnlistedTicket,
  seedListing,
  signAndSubmit,
  userWallet,
  type Integrator,
} from '../support/market';
import { makeClient } from './upstream-client.support';

/**
 * The write paths checkout and selling depend on, end to end through UpstreamClient against the sandbox:
 * list → sign accept_offer_v2 → submit → confirmed → purchase status by key; and list_ticket_v2 then
 * cancel_listing_v1. Outcomes are checked on the sandbox's ledger (owner, balances, live listing).
 */
describe('UpstreamClient purchase, listing and cancellation against the sandbox', () => {
  let sandbox: SandboxHandle;
  let client: UpstreamClient;
  let integrator: Integrator;

  beforeAll(async () => {
    sandbox = await startSandbox({
      port: 0,
      seed: 'upstream-client-purchase',
      events: 2,
      listings: 10,
      // Wallets start empty, so a buyer has exactly what the test funds.
      initialBalanceMinor: 0n,
      landingDelayMs: 1_500,
    });
    client = makeClient(sandbox.url, sandbox.admin.apiKey).client;
    integrator = await integratorOf(client);
  });
  afterAll(async () => {
    client.close();
    await sandbox.close();
  });

  it('buys a listed ticket: the buyer owns it, the seller is paid, the listing is gone, the key tells the outcome', async () => {
    const price = 12_345_678n;
    const seeded = seedListing(sandbox, { seller: 'seller-buy', askPriceMinor: price });
    const buyer = fundedBuyer(sandbox, 'buyer-buy', price + 1_000n);
    const payoutBefore = sandbox.admin.balance({ address: seeded.sellerPayout });

    const listed = await activeListingsOf(client, seeded.eventId);
    expect(listed.map((l) => [l.ticketId, l.askPriceMinor])).toEqual([[seeded.ticketId, price]]);

    const key = 'purchase-buy-1';
    const batch = acceptOfferBatch(listed[0], buyer, integrator);
    const { signed, submission } = await signAndSubmit(client, buyer, batch, key);
    expect(signed.signerAddress).toBe(buyer.address);
    expect(submission).toMatchObject({
      custodialTransactionId: signed.custodialTransactionId,
      status: 'processing',
    });
    expect((await client.getPurchaseStatus(key)).status).toBe('processing');
    // Nothing moves before landing.
    expect(sandbox.admin.ticket(seeded.eventId, seeded.ticketId)?.owner).toBe(seeded.seller.address);

    const landed = await land(sandbox, client, signed);
    expect(landed).toMatchObject({
      status: 'confirmed',
      transactionSignature: submission.transactionSignature,
    });

    const status = await client.getPurchaseStatus(key);
    expect(status.status).toBe('confirmed');
    expect(status.raw).toMatchObject({
      idempotency_key: key,
      custodial_transaction_id: signed.custodialTransactionId,
      subject: buyer.subject,
      items: [{ event_id: seeded.eventId.toString(), ticket_id: seeded.ticketId.toString() }],
      failure_reason: null,
    });

    expect(sandbox.admin.ticket(seeded.eventId, seeded.ticketId)).toMatchObject({
      owner: buyer.address,
      listed_permit_version: null,
    });
    expect(sandbox.admin.balance({ address: seeded.sellerPayout })).toBe(payoutBefore + price);
    expect(sandbox.admin.balance({ kind: 'user', subject: buyer.subject })).toBe(1_000n);
    expect(await activeListingsOf(client, seeded.eventId)).toEqual([]);
  });

  it('a buyer without the money: the purchase lands with an error and nothing moves', async () => {
    const price = 5_000_000n;
    const seeded = seedListing(sandbox, { seller: 'seller-poor', askPriceMinor: price });
    const buyer = fundedBuyer(sandbox, 'buyer-poor', price - 1n);
    const [listing] = await activeListingsOf(client, seeded.eventId);

    const key = 'purchase-poor-1';
    const { signed } = await signAndSubmit(client, buyer, acceptOfferBatch(listing, buyer, integrator), key);
    const landed = await land(sandbox, client, signed);

    expect(landed.status).toBe('landed_with_error');
    expect(landed.failureReason).toMatch(/insufficient stablecoin balance/);
    expect((await client.getPurchaseStatus(key)).status).toBe('landed_with_error');
    expect(sandbox.admin.ticket(seeded.eventId, seeded.ticketId)?.owner).toBe(seeded.seller.address);
    expect(sandbox.admin.balance({ kind: 'user', subject: buyer.subject })).toBe(price - 1n);
    expect((await activeListingsOf(client, seeded.eventId)).map((l) => l.ticketId)).toEqual([
      seeded.ticketId,
    ]);
  });

  it('signing for a wallet that is not the subject’s own is refused before anything is signed', async () => {
    const seeded = seedListing(sandbox, { seller: 'seller-other', askPriceMinor: 1_000n });
    const [listing] = await activeListingsOf(client, seeded.eventId);
    const someoneElse = userWallet(sandbox, 'buyer-someone-else');
    const batch = acceptOfferBatch(listing, someoneElse, integrator);
    await expect(
      client.signUserTransaction('buyer-impostor', batch, 'purchase-impostor-1'),
    ).rejects.toMatchObject({
      code: 'FORBIDDEN',
      status: 403,
    });
  });

  it('lists a ticket (list_ticket_v2) and cancels it (cancel_listing_v1)', async () => {
    const { eventId, ticketId, owner: seller } = mintUnlistedTicket(sandbox, 'seller-list');
    const payout = userWallet(sandbox, 'seller-list-payout').address;
    const price = 42_000_000n;
    const expiresAt = BigInt(Math.floor(sandbox.admin.now() / 1000) + 86_400);
    expect(await activeListingsOf(client, eventId)).toEqual([]);

    const listing = await signAndSubmit(
      client,
      seller,
      listTicketBatch({
        seller,
        eventId,
        ticketId,
        askPriceMinor: price,
        payout,
        expiresAtUnixSeconds: expiresAt,
        integrator,
      }),
      'list-1',
    );
    expect(listing.submission.status).toBe('processing');
    expect(await activeListingsOf(client, eventId)).toEqual([]);
    expect((await land(sandbox, client, listing.signed)).status).toBe('confirmed');

    const active = await activeListingsOf(client, eventId);
    expect(active.map((l) => [l.ticketId, l.askPriceMinor])).toEqual([[ticketId, price]]);
    expect(active[0].raw).toMatchObject({
      seller: seller.address,
      seller_payout: payout,
      permit_version: '1',
      expires_at: expiresAt.toString(),
      listing_integrator_authority: integrator.authority,
    });
    expect(sandbox.admin.ticket(eventId, ticketId)?.listed_permit_version).toBe('1');

    const cancel = await signAndSubmit(
      client,
      seller,
      cancelListingBatch(eventId, ticketId, seller),
      'cancel-1',
    );
    expect(cancel.submission.status).toBe('processing');
    expect((await land(sandbox, client, cancel.signed)).status).toBe('confirmed');

    expect(await activeListingsOf(client, eventId)).toEqual([]);
    expect(sandbox.admin.listing(eventId, ticketId)).toBeUndefined();
    expect(sandbox.admin.ticket(eventId, ticketId)).toMatchObject({
      owner: seller.address,
      listed_permit_version: null,
    });
  });

  it('cancelling a listing that is not live lands with an error', async () => {
    const { eventId, ticketId, owner } = mintUnlistedTicket(sandbox, 'seller-nolisting');
    const { signed } = await signAndSubmit(
      client,
      owner,
      cancelListingBatch(eventId, ticketId, owner),
      'cancel-nothing-1',
    );
    const landed = await land(sandbox, client, signed);
    expect(landed.status).toBe('landed_with_error');
    expect(landed.failureReason).toMatch(/listing not found/);
  });
});
