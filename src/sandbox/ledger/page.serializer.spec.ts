import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../chain/prng';
import { WalletKeys } from '../chain/wallet.keys';
import { noFaults } from '../faults/injector';
import { SandboxLedger } from './ledger';
import { serializeListings } from './page.serializer';

const keys = new WalletKeys('serializer');
const SAFE = 9_007_199_254_740_991n;
const U64_MAX = 18_446_744_073_709_551_615n;

/** A listing per boundary value: each 64-bit field just inside, at and past the exact-number range. */
const CASES: { ticketId: bigint; price: bigint; expiresAt: bigint }[] = [
  { ticketId: 1n, price: 1n, expiresAt: 1_900_000_000n },
  { ticketId: SAFE, price: SAFE, expiresAt: SAFE },
  { ticketId: SAFE + 1n, price: SAFE + 1n, expiresAt: SAFE + 1n },
  { ticketId: U64_MAX, price: U64_MAX, expiresAt: 9_223_372_036_854_775_807n },
  // Every digit count and both signs, through the digit-by-digit writer.
  ...Array.from({ length: 16 }, (_, k) => ({
    ticketId: 10n ** BigInt(k) + 2n,
    price: 10n ** BigInt(k) - 1n,
    expiresAt: -(10n ** BigInt(k)) + BigInt(k % 3),
  })),
  { ticketId: 0n, price: 0n, expiresAt: -SAFE },
];

function ledgerWithCases(): { ledger: SandboxLedger; seqs: number[] } {
  const ledger = new SandboxLedger(keys, 0n);
  ledger.createEvent({
    eventId: 5n,
    name: 'e',
    startAtMs: 0,
    venue: 'v',
    royalty: [],
    ticketTypeConfig: null,
  });
  const seller = keys.address('user', 'seller');
  const seqs = CASES.map((c) =>
    ledger.openListing(ledger.mintTicket(5n, c.ticketId, seller), {
      askPriceMinor: c.price,
      sellerPayout: 0,
      integratorIdentity: 0,
      integratorAuthority: 0,
      buyerAllow: -1,
      ticketTypeConfig: -1,
      expiresAt: c.expiresAt,
    }),
  );
  return { ledger, seqs };
}

describe(serializeListings.name, () => {
  it('writes every 64-bit value exactly, as a string, on both sides of 2^53', () => {
    const { ledger, seqs } = ledgerWithCases();
    const text = serializeListings(ledger, seqs, noFaults(), new SeededRandom('t'));
    const items = JSON.parse(`[${text}]`) as Record<string, unknown>[];
    expect(items.map((i) => [i.ticket_id, i.ask_price_minor, i.expires_at, i.permit_version])).toEqual(
      CASES.map((c) => [`${c.ticketId}`, `${c.price}`, `${c.expiresAt}`, '1']),
    );
  });

  it('under u64_as_number, bare integers only up to 2^53-1 and strings past it', () => {
    const { ledger, seqs } = ledgerWithCases();
    const text = serializeListings(ledger, seqs, { ...noFaults(), u64AsNumber: true }, new SeededRandom('t'));
    expect(text).toContain(`"ticket_id":${SAFE},"ask_price_minor":${SAFE}`);
    expect(text).toContain(`"ticket_id":"${SAFE + 1n}","ask_price_minor":"${SAFE + 1n}"`);
    expect(text).toContain(`"expires_at":${SAFE}`);
    expect(text).toContain(`"expires_at":"${SAFE + 1n}"`);
    expect(text).toContain(`"ask_price_minor":"${U64_MAX}"`);
    const items = JSON.parse(`[${text}]`) as Record<string, unknown>[];
    const exact = (v: bigint): unknown => (v <= SAFE && v >= -SAFE ? Number(v) : `${v}`);
    expect(items.map((i) => [i.ticket_id, i.ask_price_minor, i.expires_at])).toEqual(
      CASES.map((c) => [exact(c.ticketId), exact(c.price), exact(c.expiresAt)]),
    );
  });

  it('writes the item fields in contract order, extra field included under the fault', () => {
    const { ledger, seqs } = ledgerWithCases();
    const text = serializeListings(
      ledger,
      seqs.slice(0, 1),
      { ...noFaults(), extraFields: true },
      new SeededRandom('t'),
    );
    expect(Object.keys(JSON.parse(text) as object)).toEqual([
      'event_id',
      'ticket_id',
      'ask_price_minor',
      'seller',
      'seller_payout',
      'permit_version',
      'royalty_destinations',
      'ticket_type_config',
      'stablecoin_mint',
      'buyer_allow',
      'listing_integrator_identity',
      'listing_integrator_authority',
      'expires_at',
      'x_sandbox_extra',
    ]);
  });
});
