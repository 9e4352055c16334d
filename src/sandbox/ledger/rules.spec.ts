import { describe, expect, it } from 'vitest';
import type { AcceptOfferParams, LedgerInstruction } from '../chain/instruction.model';
import { applyInstructions } from './rules';
import { SandboxLedger } from './ledger';
import { WalletKeys } from '../chain/wallet.keys';

const NOW = Date.UTC(2030, 0, 1);
const keys = new WalletKeys('rules');
const seller = keys.address('user', 'seller');
const buyer = keys.address('user', 'buyer');
const payout = keys.syntheticAddress('payout');

function setup(balance = 1_000n): { ledger: SandboxLedger; accept: AcceptOfferParams } {
  const ledger = new SandboxLedger(keys, balance);
  ledger.createEvent({
    eventId: 7n,
    name: 'e',
    startAtMs: NOW + 86_400_000,
    venue: 'v',
    royalty: [],
    ticketTypeConfig: null,
  });
  const ticket = ledger.mintTicket(7n, 1n, seller);
  ledger.openListing(ticket, {
    askPriceMinor: 600n,
    sellerPayout: ledger.addresses.intern(payout),
    integratorIdentity: 0,
    integratorAuthority: 0,
    buyerAllow: -1,
    ticketTypeConfig: -1,
    expiresAt: BigInt(NOW / 1000 + 3600),
  });
  const accept: AcceptOfferParams = {
    eventId: 7n,
    ticketId: 1n,
    permitVersion: 1n,
    buyer,
    integratorAuthority: buyer,
    sellerPayout: payout,
    royaltyDestinations: [],
    ticketTypeConfig: null,
    integratorIdentity: buyer,
    stablecoinMint: keys.stablecoinMint,
  };
  return { ledger, accept };
}

const acceptIx = (params: AcceptOfferParams): LedgerInstruction => ({
  instruction: 'accept_offer_v2',
  signer: params.buyer,
  params,
});

describe(applyInstructions.name, () => {
  it('moves the ticket and the money and closes the listing when an offer is accepted', () => {
    const { ledger, accept } = setup();
    expect(applyInstructions(ledger, [acceptIx(accept)], NOW)).toBeUndefined();
    const ticket = ledger.findTicket(7n, 1n);
    expect(ledger.addresses.get(ledger.tickets.owner[ticket])).toBe(buyer);
    expect(ledger.tickets.listing[ticket]).toBe(-1);
    expect(ledger.listings.activeCount).toBe(0);
    expect(ledger.balanceOf(ledger.addresses.find(buyer))).toBe(400n);
    expect(ledger.balanceOf(ledger.addresses.find(payout))).toBe(1600n);
  });

  it.each<[string, Partial<AcceptOfferParams>, RegExp]>([
    ['stale permit', { permitVersion: 2n }, /permit_version/],
    ['wrong payout', { sellerPayout: buyer }, /seller_payout/],
    ['wrong mint', { stablecoinMint: payout }, /stablecoin_mint/],
    ['royalty mismatch', { royaltyDestinations: [payout] }, /royalty/],
    ['ticket type config mismatch', { ticketTypeConfig: payout }, /ticket_type_config/],
    ['unknown ticket', { ticketId: 2n }, /does not exist/],
    ['buyer is seller', { buyer: seller }, /buyer is the seller/],
  ])('fails landing on %s and changes nothing', (_name, change, reason) => {
    const { ledger, accept } = setup();
    expect(applyInstructions(ledger, [acceptIx({ ...accept, ...change })], NOW)).toMatch(reason);
    expect(ledger.listings.activeCount).toBe(1);
  });

  it('fails on an expired listing and on insufficient funds', () => {
    const { ledger, accept } = setup();
    expect(applyInstructions(ledger, [acceptIx(accept)], NOW + 3_600_000)).toMatch(/expired/);
    const poor = setup(10n);
    expect(applyInstructions(poor.ledger, [acceptIx(poor.accept)], NOW)).toMatch(/insufficient/);
  });

  it('is all-or-nothing across a batch', () => {
    const { ledger, accept } = setup();
    const cancel: LedgerInstruction = {
      instruction: 'cancel_listing_v1',
      signer: seller,
      params: { eventId: 7n, ticketId: 99n, canceller: seller },
    };
    expect(applyInstructions(ledger, [acceptIx(accept), cancel], NOW)).toMatch(/instruction 1/);
    expect(ledger.listings.activeCount).toBe(1);
  });

  it('lists only owned, unlisted tickets with a future expiry and bumps the permit version', () => {
    const { ledger } = setup();
    const base = {
      seller,
      storageFeePayer: seller,
      listingIntegratorIdentity: seller,
      listingIntegratorAuthority: seller,
      stablecoinMint: keys.stablecoinMint,
      eventId: 7n,
      ticketId: 1n,
      askPriceMinor: 5n,
      buyerAllow: null,
      payoutAta: seller,
      expiresAt: BigInt(NOW / 1000 + 60),
      ticketTypeConfig: null,
    };
    const list = (p: typeof base): LedgerInstruction => ({
      instruction: 'list_ticket_v2',
      signer: p.seller,
      params: p,
    });
    expect(applyInstructions(ledger, [list(base)], NOW)).toMatch(/already listed/);
    const cancel: LedgerInstruction = {
      instruction: 'cancel_listing_v1',
      signer: seller,
      params: { eventId: 7n, ticketId: 1n, canceller: buyer },
    };
    expect(applyInstructions(ledger, [cancel], NOW)).toMatch(/neither the seller/);
    expect(
      applyInstructions(ledger, [{ ...cancel, params: { ...cancel.params, canceller: seller } }], NOW),
    ).toBeUndefined();
    expect(applyInstructions(ledger, [list({ ...base, expiresAt: BigInt(NOW / 1000) })], NOW)).toMatch(
      /expires_at/,
    );
    expect(applyInstructions(ledger, [list({ ...base, seller: buyer })], NOW)).toMatch(/does not own/);
    expect(applyInstructions(ledger, [list(base)], NOW)).toBeUndefined();
    const seq = ledger.tickets.listing[ledger.findTicket(7n, 1n)];
    expect(ledger.listings.permitVersion[seq]).toBe(2n);
  });
});

describe(SandboxLedger.name, () => {
  it('refuses to pick a fresh ticket id past u64 instead of wrapping to 0', () => {
    const { ledger } = setup();
    ledger.mintTicket(7n, 18446744073709551615n, seller);
    expect(() => ledger.mintTicket(7n, undefined, seller)).toThrow(/no ticket id left/);
    expect(ledger.findTicket(7n, 0n)).toBe(-1);
  });
});
