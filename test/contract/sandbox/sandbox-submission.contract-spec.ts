import { Transaction } from '@solana/web3.js';
import bs58 from 'bs58';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ListingView } from '../../../src/sandbox/admin.types';
import { acceptParams, batch, expectSchema, TestSandbox } from './sandbox.harness';

describe('sandbox submission and landing', () => {
  let sut: TestSandbox;
  let n = 0;
  const key = (): string => `sub-${++n}`;
  beforeAll(async () => {
    sut = await TestSandbox.start({ landingDelayMs: 2000 });
  });
  afterAll(() => sut.close());

  async function freshListing(seller = 'seller-x'): Promise<ListingView> {
    const event = sut.admin.createEvent();
    return sut.admin.seedListing({
      eventId: event.eventId,
      seller: { kind: 'user', subject: seller },
      askPriceMinor: 25_000_000n,
    });
  }

  async function signPurchase(
    listing: ListingView,
    buyer: string,
    idem = key(),
  ): Promise<Record<string, string>> {
    const res = await sut.sign(
      'users',
      buyer,
      idem,
      batch('accept_offer_v2', [acceptParams(sut, listing, buyer)]),
    );
    expect(res.status).toBe(200);
    return res.json() as Record<string, string>;
  }

  async function submit(signedTransaction: string): Promise<Record<string, unknown>> {
    const res = await sut.submit({ signedTransaction });
    expect(res.status).toBe(200);
    const body = res.json();
    expectSchema('SubmissionResult', body);
    return body;
  }

  /** Mints a ticket to `subject`, then lists it through a signed and landed list_ticket_v2. */
  async function listThroughLedger(subject: string, askPriceMinor: string) {
    const event = sut.admin.createEvent();
    const ticket = sut.admin.mintTicket({ eventId: event.eventId, owner: { kind: 'user', subject } });
    const seller = sut.admin.userWalletAddress(subject);
    const [template] = await sut.firstListings(1);
    const list = batch('list_ticket_v2', [
      {
        seller,
        storage_fee_payer: seller,
        listing_integrator_identity: template.listing_integrator_identity,
        listing_integrator_authority: template.listing_integrator_authority,
        stablecoin_mint: sut.admin.stablecoinMint,
        event_id: ticket.event_id,
        ticket_id: ticket.ticket_id,
        ask_price_minor: askPriceMinor,
        payout_ata: seller,
        expires_at: String(Math.floor(event.startAtMs / 1000)),
      },
    ]);
    const signed = (await sut.sign('users', subject, key(), list)).json() as Record<string, string>;
    await submit(signed.signedTransaction);
    sut.admin.advanceTime(2000);
    return { ticket, seller };
  }

  it('buys a listing end to end: processing, confirmed, listing gone, purchase status by key', async () => {
    const listing = await freshListing();
    const idem = key();
    const signed = await signPurchase(listing, 'buyer-1', idem);
    const pending = (await sut.get(`/claim_wallets/purchase-status?idempotency-key=${idem}`)).json();
    expectSchema('PurchaseStatus', pending);
    expect(pending.status).toBe('signed');
    const first = await submit(signed.signedTransaction);
    expect(first).toEqual({
      custodialTransactionId: signed.custodialTransactionId,
      transactionSignature: signed.feePayerSignature,
      status: 'processing',
    });
    sut.admin.advanceTime(2000);
    expect((await submit(signed.signedTransaction)).status).toBe('confirmed');
    const remaining = await sut.get(`/indexer/listings/active?eventId=${listing.event_id}`);
    expect(remaining.json().items).toEqual([]);
    expect(sut.admin.ticket(BigInt(listing.event_id), BigInt(listing.ticket_id))?.owner).toBe(
      sut.admin.userWalletAddress('buyer-1'),
    );
    const status = await sut.get(`/claim_wallets/purchase-status?idempotency-key=${idem}`);
    expect(status.status).toBe(200);
    expectSchema('PurchaseStatus', status.json());
    expect(status.json()).toMatchObject({
      status: 'confirmed',
      custodial_transaction_id: signed.custodialTransactionId,
      failure_reason: null,
    });
  });

  it('lists a ticket through a transaction, shows it in the indexer, then cancels it', async () => {
    const { ticket, seller } = await listThroughLedger('lister', '123456789');
    const page = (await sut.get(`/indexer/listings/active?eventId=${ticket.event_id}`)).json() as {
      items: ListingView[];
    };
    expect(page.items).toHaveLength(1);
    expect(page.items[0]).toMatchObject({
      ticket_id: ticket.ticket_id,
      ask_price_minor: '123456789',
      seller,
      permit_version: '1',
    });
    const cancel = batch('cancel_listing_v1', [
      { event_id: ticket.event_id, ticket_id: ticket.ticket_id, canceller: seller },
    ]);
    const cancelled = (await sut.sign('users', 'lister', key(), cancel)).json() as Record<string, string>;
    await submit(cancelled.signedTransaction);
    sut.admin.advanceTime(2000);
    expect((await submit(cancelled.signedTransaction)).status).toBe('confirmed');
    expect((await sut.get(`/indexer/listings/active?eventId=${ticket.event_id}`)).json().items).toEqual([]);
  });

  it('acceptance: lists a ticket, finds it in the indexer, buys it, and the key reports the purchase', async () => {
    const { ticket } = await listThroughLedger('acc-seller', '4200000');
    const path = `/indexer/listings/active?eventId=${ticket.event_id}`;
    const [item] = ((await sut.get(path)).json() as { items: ListingView[] }).items;
    expect(item).toMatchObject({ ticket_id: ticket.ticket_id, ask_price_minor: '4200000' });
    const idem = key();
    const bought = await signPurchase(item, 'acc-buyer', idem);
    await submit(bought.signedTransaction);
    sut.admin.advanceTime(2000);
    expect((await sut.get(path)).json().items).toEqual([]);
    const status = (await sut.get(`/claim_wallets/purchase-status?idempotency-key=${idem}`)).json();
    expect(status).toMatchObject({
      status: 'confirmed',
      custodial_transaction_id: bought.custodialTransactionId,
      items: [{ event_id: ticket.event_id, ticket_id: ticket.ticket_id }],
    });
    expect(sut.admin.ticket(BigInt(ticket.event_id), BigInt(ticket.ticket_id))?.owner).toBe(
      sut.admin.userWalletAddress('acc-buyer'),
    );
  });

  it('lands with an error when the listing is gone by landing time', async () => {
    const listing = await freshListing();
    const a = await signPurchase(listing, 'racer-a');
    const b = await signPurchase(listing, 'racer-b');
    await submit(a.signedTransaction);
    await submit(b.signedTransaction);
    sut.admin.advanceTime(2000);
    expect((await submit(a.signedTransaction)).status).toBe('confirmed');
    const lost = await submit(b.signedTransaction);
    expect(lost.status).toBe('landed_with_error');
    expect(lost.failureReason).toMatch(/listing not found/);
  });

  it('says in the ledger listing when each transaction landed (the moment its listing left the indexer)', async () => {
    const listing = await freshListing();
    const a = await signPurchase(listing, 'timed-a');
    const b = await signPurchase(listing, 'timed-b');
    const signedOnly = await signPurchase(await freshListing(), 'timed-c');
    const submittedAt = sut.admin.stats().nowMs;
    await submit(a.signedTransaction);
    sut.admin.advanceTime(500);
    await submit(b.signedTransaction);
    const byId = async (): Promise<Map<string, Record<string, unknown>>> => {
      const { items } = (
        await sut.request('GET', '/__sandbox/transactions', {
          key: null,
          headers: { 'x-sandbox-admin-key': sut.admin.adminKey },
        })
      ).json() as { items: Record<string, unknown>[] };
      return new Map(items.map((t) => [t.custodialTransactionId as string, t]));
    };
    const processing = await byId();
    expect(processing.get(a.custodialTransactionId)).toMatchObject({ state: 'processing', landedAtMs: null });
    expect(processing.get(signedOnly.custodialTransactionId)).toMatchObject({ landedAtMs: null });
    sut.admin.advanceTime(5000);
    const landed = await byId();
    // Landing time is the sandbox clock's, when the transaction took effect, not when it was next asked about.
    expect(landed.get(a.custodialTransactionId)).toMatchObject({
      state: 'confirmed',
      landedAtMs: submittedAt + 2000,
    });
    expect(landed.get(b.custodialTransactionId)).toMatchObject({
      state: 'landed_with_error',
      landedAtMs: submittedAt + 2500,
    });
    expect(landed.get(signedOnly.custodialTransactionId)).toMatchObject({ landedAtMs: null });
  });

  it('lands with an error on a stale permit_version', async () => {
    const listing = await freshListing();
    const res = await sut.sign(
      'users',
      'late',
      key(),
      batch('accept_offer_v2', [{ ...acceptParams(sut, listing, 'late'), permit_version: '7' }]),
    );
    await submit(res.json().signedTransaction as string);
    sut.admin.advanceTime(2000);
    const result = await submit(res.json().signedTransaction as string);
    expect(result).toMatchObject({
      status: 'landed_with_error',
      failureReason: expect.stringMatching(/permit_version/),
    });
  });

  it('expires a transaction whose blockhash outlived its lifetime', async () => {
    const listing = await freshListing();
    const idem = key();
    const signed = await signPurchase(listing, 'slowpoke', idem);
    sut.admin.advanceTime(61_000);
    expect((await submit(signed.signedTransaction)).status).toBe('expired');
    expect((await sut.get(`/claim_wallets/purchase-status?idempotency-key=${idem}`)).json().status).toBe(
      'expired',
    );
    expect(sut.admin.listing(BigInt(listing.event_id), BigInt(listing.ticket_id))).toBeDefined();
  });

  it('expires a submitted transaction that cannot land before its blockhash ages out', async () => {
    const slow = await TestSandbox.start({ landingDelayMs: 120_000 });
    try {
      const [listing] = await slow.firstListings(1);
      const res = await slow.sign(
        'users',
        'b',
        'k',
        batch('accept_offer_v2', [acceptParams(slow, listing, 'b')]),
      );
      const tx = res.json().signedTransaction as string;
      expect((await slow.submit({ signedTransaction: tx })).json().status).toBe('processing');
      slow.admin.advanceTime(60_000);
      expect((await slow.submit({ signedTransaction: tx })).json().status).toBe('expired');
    } finally {
      await slow.close();
    }
  });

  it('rejects a transaction with one flipped byte, anywhere, with 400', async () => {
    const signed = await signPurchase(await freshListing(), 'flipper');
    const wire = Buffer.from(signed.signedTransaction, 'base64');
    for (const offset of [1, 70, 140, wire.length - 1]) {
      const tampered = Buffer.from(wire);
      tampered[offset] ^= 0x01;
      const res = await sut.submit({ signedTransaction: tampered.toString('base64') });
      expect({ offset, status: res.status }).toEqual({ offset, status: 400 });
    }
  });

  it('rejects missing signatures unless additionalSignatures supplies them', async () => {
    const signed = await signPurchase(await freshListing(), 'cosigner');
    const tx = Transaction.from(Buffer.from(signed.signedTransaction, 'base64'));
    const index = tx.signatures.findIndex((s) => s.publicKey.toBase58() === signed.signerAddress);
    const wire = Buffer.from(tx.serialize());
    wire.fill(0, 1 + index * 64, 1 + (index + 1) * 64);
    const stripped = wire.toString('base64');
    expect((await sut.submit({ signedTransaction: stripped })).status).toBe(400);
    const wrong = bs58.encode(Buffer.alloc(64, 7));
    const bad = await sut.submit({
      signedTransaction: stripped,
      additionalSignatures: [{ address: signed.signerAddress, signature: wrong }],
    });
    expect(bad.status).toBe(400);
    const good = await sut.submit({
      signedTransaction: stripped,
      additionalSignatures: [{ address: signed.signerAddress, signature: signed.signature }],
    });
    expect(good.status).toBe(200);
    expect(good.json().status).toBe('processing');
  });

  it('rejects additionalSignatures: null (optional, not nullable) and accepts it absent or empty', async () => {
    const signed = await signPurchase(await freshListing(), 'nullable');
    const tx = signed.signedTransaction;
    const nulled = await sut.submit({ signedTransaction: tx, additionalSignatures: null });
    expect(nulled.status).toBe(400);
    expectSchema('ErrorBody', nulled.json());
    expect((await sut.submit({ signedTransaction: tx, additionalSignatures: [] })).status).toBe(200);
    expect((await sut.submit({ signedTransaction: tx })).status).toBe(200);
  });

  it.each([
    ['missing signedTransaction', {}],
    ['empty signedTransaction', { signedTransaction: '' }],
    ['non-base64 signedTransaction', { signedTransaction: '***' }],
    ['bytes that are not a transaction', { signedTransaction: 'AAAA' }],
    ['unknown field', { signedTransaction: 'AAAA', note: 1 }],
    ['additionalSignatures not an array', { signedTransaction: 'AAAA', additionalSignatures: {} }],
  ])('rejects %s with 400', async (_name, body) => {
    const res = await sut.submit(body);
    expect(res.status).toBe(400);
    expectSchema('ErrorBody', res.json());
  });

  it('answers 404 for an unknown purchase key and 400 for a missing one', async () => {
    expect((await sut.get('/claim_wallets/purchase-status?idempotency-key=never-used')).status).toBe(404);
    expect((await sut.get('/claim_wallets/purchase-status')).status).toBe(400);
  });

  it('fails landings by the configured probability', async () => {
    const flaky = await TestSandbox.start({ landingFailureProbability: 1, landingDelayMs: 0 });
    try {
      const [listing] = await flaky.firstListings(1);
      const res = await flaky.sign(
        'users',
        'b',
        'k',
        batch('accept_offer_v2', [acceptParams(flaky, listing, 'b')]),
      );
      const tx = res.json().signedTransaction as string;
      expect((await flaky.submit({ signedTransaction: tx })).json().status).toBe('processing');
      const landed = (await flaky.submit({ signedTransaction: tx })).json();
      expect(landed).toMatchObject({
        status: 'landed_with_error',
        failureReason: 'simulated landing failure',
      });
      expect(flaky.admin.listing(BigInt(listing.event_id), BigInt(listing.ticket_id))).toBeDefined();
    } finally {
      await flaky.close();
    }
  });
});
