import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { SeededRandom } from '../chain/prng';
import { WalletKeys } from '../chain/wallet.keys';
import { noFaults, type FaultPlan } from '../faults/injector';
import { SandboxLedger } from './ledger';
import { fragmentCounters } from './listing.fragments';
import { writeListings } from './listing.writer';
import { listingsPageBytes, serializeListings } from './page.serializer';

const keys = new WalletKeys('listing-writer');
const I64_MAX = 9_223_372_036_854_775_807n;
const U64_MAX = 18_446_744_073_709_551_615n;
const SAFE = 9_007_199_254_740_991n;
const ADDRESSES = Array.from({ length: 6 }, (_, k) => keys.syntheticAddress('writer-spec', k));
const EVENTS = [
  { eventId: 7n, royalty: [], ticketTypeConfig: null },
  { eventId: 2n ** 63n + 5n, royalty: [ADDRESSES[0]], ticketTypeConfig: ADDRESSES[1] },
  { eventId: 900n, royalty: [ADDRESSES[2], ADDRESSES[3]], ticketTypeConfig: ADDRESSES[4] },
];

/** What the contract says an item of a listing the test opened must read (u64/i64 as decimal strings). */
interface ExpectedItem {
  event_id: string;
  ticket_id: string;
  ask_price_minor: string;
  seller: string;
  seller_payout: string;
  permit_version: string;
  royalty_destinations: string[];
  ticket_type_config: string | null;
  stablecoin_mint: string;
  buyer_allow: string | null;
  listing_integrator_identity: string;
  listing_integrator_authority: string;
  expires_at: string;
}

const u64 = fc.oneof(
  fc.bigInt({ min: 0n, max: 100_000_000n }),
  fc.constantFrom(0n, SAFE, SAFE + 1n, SAFE + 2n, U64_MAX),
  fc.bigInt({ min: 0n, max: U64_MAX }),
);
const expiry = fc.oneof(
  fc.constantFrom(-SAFE, -SAFE - 1n, SAFE, SAFE + 1n, I64_MAX),
  fc.bigInt({ min: 1_000n, max: 1_100n }),
  fc.bigInt({ min: -I64_MAX, max: I64_MAX }),
);
// Mostly the same value, so items often share all but one key of a cached fragment.
const address = fc.oneof(fc.constant(0), fc.integer({ min: 0, max: ADDRESSES.length - 1 }));
const optionalAddress = fc.oneof(fc.constant(-1), fc.integer({ min: -1, max: ADDRESSES.length - 1 }));

type Step =
  | {
      kind: 'open';
      event: number;
      owner: number;
      ticketId: bigint;
      price: bigint;
      payout: number;
      identity: number;
      authority: number;
      allow: number;
      typeConfig: number;
      expiresAt: bigint;
    }
  | { kind: 'close'; pick: number }
  | { kind: 'page'; limit: number; nowSec: number; plan: 'none' | 'number' | 'extra' | 'both' };

const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant('open' as const),
    event: fc.integer({ min: 0, max: EVENTS.length - 1 }),
    owner: address,
    ticketId: fc.oneof(fc.bigInt({ min: 1n, max: 20n }), u64),
    price: u64,
    payout: address,
    identity: address,
    authority: address,
    allow: optionalAddress,
    typeConfig: optionalAddress,
    expiresAt: expiry,
  }),
  fc.record({ kind: fc.constant('close' as const), pick: fc.nat() }),
  fc.record({
    kind: fc.constant('page' as const),
    limit: fc.integer({ min: 1, max: 40 }),
    nowSec: fc.integer({ min: 999, max: 1_101 }),
    plan: fc.constantFrom('none' as const, 'number' as const, 'extra' as const, 'both' as const),
  }),
);

function planOf(name: 'none' | 'number' | 'extra' | 'both'): FaultPlan {
  return {
    ...noFaults(),
    u64AsNumber: name === 'number' || name === 'both',
    extraFields: name === 'extra' || name === 'both',
  };
}

function newLedger(): SandboxLedger {
  const ledger = new SandboxLedger(keys, 0n);
  EVENTS.forEach((e, i) =>
    ledger.createEvent({ ...e, name: `e${i}`, startAtMs: 0, venue: 'v', royalty: e.royalty }),
  );
  return ledger;
}

const INTEGER_FIELDS = ['event_id', 'ticket_id', 'ask_price_minor', 'permit_version', 'expires_at'];

/**
 * An item as the model writes it: integers back to decimal strings (a bare JSON integer is only allowed under
 * u64_as_number and within ±(2^53-1)), the extra field checked against the plan and removed. Returns what
 * broke a rule instead of the item.
 */
function normalized(item: Record<string, unknown>, plan: FaultPlan): unknown {
  const { x_sandbox_extra: extra, ...rest } = item;
  if ((extra !== undefined) !== plan.extraFields)
    return 'x_sandbox_extra present unless the fault asks for it';
  for (const field of INTEGER_FIELDS) {
    const value = rest[field];
    if (typeof value === 'number') {
      if (!plan.u64AsNumber || !Number.isSafeInteger(value)) return `${field} as a JSON number: ${value}`;
      rest[field] = `${value}`;
    }
  }
  return rest;
}

/**
 * Runs the steps on one ledger (its fragment cache warm from earlier pages) and lists every difference
 * between what the sandbox serves and the model: cached bytes vs the piecewise writer, items vs the
 * listings the steps opened and did not close, the served set vs the live set at that time.
 */
function differences(steps: readonly Step[]): string[] {
  const ledger = newLedger();
  const expected = new Map<number, ExpectedItem>();
  const permits = new Map<number, number>();
  const found: string[] = [];
  for (const s of steps) {
    if (s.kind === 'open') {
      const event = EVENTS[s.event];
      let ticket = ledger.findTicket(event.eventId, s.ticketId);
      if (ticket < 0) ticket = ledger.mintTicket(event.eventId, s.ticketId, ADDRESSES[s.owner]);
      if (ledger.tickets.listing[ticket] >= 0) continue; // one listing per ticket at a time
      const intern = (k: number): number => (k < 0 ? -1 : ledger.addresses.intern(ADDRESSES[k]));
      const seq = ledger.openListing(ticket, {
        askPriceMinor: s.price,
        sellerPayout: intern(s.payout),
        integratorIdentity: intern(s.identity),
        integratorAuthority: intern(s.authority),
        buyerAllow: intern(s.allow),
        ticketTypeConfig: intern(s.typeConfig),
        expiresAt: s.expiresAt,
      });
      permits.set(ticket, (permits.get(ticket) ?? 0) + 1);
      expected.set(seq, {
        event_id: `${event.eventId}`,
        ticket_id: `${s.ticketId}`,
        ask_price_minor: `${s.price}`,
        seller: ledger.ticketOwner(ticket),
        seller_payout: ADDRESSES[s.payout],
        permit_version: `${permits.get(ticket)}`,
        royalty_destinations: event.royalty,
        ticket_type_config: s.typeConfig < 0 ? null : ADDRESSES[s.typeConfig],
        stablecoin_mint: keys.stablecoinMint,
        buyer_allow: s.allow < 0 ? null : ADDRESSES[s.allow],
        listing_integrator_identity: ADDRESSES[s.identity],
        listing_integrator_authority: ADDRESSES[s.authority],
        expires_at: `${s.expiresAt}`,
      });
    } else if (s.kind === 'close') {
      const open = [...expected.keys()];
      if (open.length === 0) continue;
      const seq = open[s.pick % open.length];
      ledger.closeListing(seq); // bought or cancelled
      expected.delete(seq);
    } else {
      const plan = planOf(s.plan);
      const served: number[] = [];
      let from: number | null = 0;
      for (let guard = 0; guard < 100 && from !== null; guard++) {
        const page = ledger.liveListings(from, s.limit, s.nowSec * 1000);
        const cached = serializeListings(ledger, page.seqs, plan, new SeededRandom('p'));
        const piecewise = serializeListings(ledger, page.seqs, plan, new SeededRandom('p'), false);
        if (cached !== piecewise) found.push(`bytes differ: ${cached} vs ${piecewise}`);
        const items = (JSON.parse(`[${cached}]`) as Record<string, unknown>[]).map((i) =>
          normalized(i, plan),
        );
        const want = page.seqs.map((seq) => expected.get(seq));
        if (JSON.stringify(items) !== JSON.stringify(want))
          found.push(`items ${JSON.stringify(items)} vs model ${JSON.stringify(want)}`);
        served.push(...page.seqs);
        from = page.next;
      }
      // Closed and expired listings are not served; every other listing the steps opened is.
      const live = [...expected.entries()]
        .filter(([, item]) => BigInt(item.expires_at) > BigInt(s.nowSec))
        .map(([seq]) => seq)
        .sort((x, y) => x - y);
      if (served.join() !== live.join()) found.push(`served ${served.join()} vs live ${live.join()}`);
    }
  }
  return found;
}

describe(writeListings.name, () => {
  it('serves, from its fragment cache, exactly the items the model holds, byte for byte as the piecewise writer, while listings open, close and expire', () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 60 }), (steps) => {
        expect(differences(steps)).toEqual([]);
      }),
      { numRuns: 150 },
    );
  });

  it.each(['payout', 'allow', 'identity', 'authority', 'typeConfig'] as const)(
    'tells apart items that differ only in %s, in every order, with the cache warm',
    (field) => {
      const ledger = newLedger();
      const intern = (k: number): number => ledger.addresses.intern(ADDRESSES[k]);
      // Three values of the one field, in runs and alternating, so both ways fill, hit, swap and evict.
      const pattern = [0, 0, 1, 1, 0, 1, 0, 2, 2, 1, 0, 2, 1, 1, 0];
      const seqs = pattern.map((v, k) => {
        const value = (name: typeof field, otherwise: number): number =>
          name === field ? intern(v + 1) : otherwise;
        return ledger.openListing(ledger.mintTicket(900n, BigInt(k + 1), ADDRESSES[0]), {
          askPriceMinor: 5n,
          sellerPayout: value('payout', intern(0)),
          integratorIdentity: value('identity', intern(0)),
          integratorAuthority: value('authority', intern(0)),
          buyerAllow: value('allow', -1),
          ticketTypeConfig: value('typeConfig', -1),
          expiresAt: 5n,
        });
      });
      const pages = [0, 1, 2].map(() =>
        [...Array(seqs.length).keys()].map((k) =>
          serializeListings(ledger, [seqs[k]], noFaults(), new SeededRandom('w')),
        ),
      );
      const reference = seqs.map((seq) =>
        serializeListings(ledger, [seq], noFaults(), new SeededRandom('w'), false),
      );
      for (const page of pages) expect(page).toEqual(reference);
      const whole = serializeListings(ledger, seqs, noFaults(), new SeededRandom('w'));
      expect(whole).toBe(reference.join(','));
    },
  );

  it('keeps serving the right seller when sellers collide in the direct-mapped fragment table', () => {
    const ledger = newLedger();
    // Past 4096 addresses, seller indices i and i + 4096 share a slot.
    const owners = Array.from({ length: 4200 }, (_, k) => keys.syntheticAddress('many-sellers', k));
    owners.forEach((o) => ledger.addresses.intern(o));
    const seqs: number[] = [];
    for (let k = 0; k < 40; k++) {
      const owner = owners[k % 2 === 0 ? 10 + k : 10 + k + 4096 - 1];
      const ticket = ledger.mintTicket(7n, BigInt(k + 1), owner);
      seqs.push(
        ledger.openListing(ticket, {
          askPriceMinor: 1n,
          sellerPayout: ledger.addresses.intern(ADDRESSES[1]),
          integratorIdentity: 0,
          integratorAuthority: 0,
          buyerAllow: -1,
          ticketTypeConfig: -1,
          expiresAt: 5n,
        }),
      );
    }
    for (let round = 0; round < 2; round++) {
      const items = JSON.parse(`[${serializeListings(ledger, seqs, noFaults(), new SeededRandom('c'))}]`) as {
        seller: string;
        seller_payout: string;
      }[];
      expect(items.map((i) => i.seller)).toEqual(
        seqs.map((seq) => ledger.ticketOwner(ledger.listings.ticketIdx[seq])),
      );
      expect(new Set(items.map((i) => i.seller_payout))).toEqual(new Set([ADDRESSES[1]]));
    }
  });

  it('writes an event part longer than a fragment slab (300 royalty destinations) whole', () => {
    const ledger = newLedger();
    const royalty = Array.from({ length: 300 }, (_, k) => keys.syntheticAddress('royalty-many', k));
    ledger.createEvent({
      eventId: 42n,
      name: 'r',
      startAtMs: 0,
      venue: 'v',
      royalty,
      ticketTypeConfig: null,
    });
    const seqs = [1n, 2n].map((ticketId) =>
      ledger.openListing(ledger.mintTicket(42n, ticketId, ADDRESSES[0]), {
        askPriceMinor: 3n,
        sellerPayout: 0,
        integratorIdentity: 0,
        integratorAuthority: 0,
        buyerAllow: -1,
        ticketTypeConfig: -1,
        expiresAt: 5n,
      }),
    );
    const text = serializeListings(ledger, seqs, noFaults(), new SeededRandom('l'));
    expect(text).toBe(serializeListings(ledger, seqs, noFaults(), new SeededRandom('l'), false));
    const items = JSON.parse(`[${text}]`) as { royalty_destinations: string[] }[];
    expect(items.map((i) => i.royalty_destinations)).toEqual([royalty, royalty]);
  });

  it('reuses its fragments across pages and builds new ones only for values it has not seen', () => {
    const ledger = newLedger();
    const seller = ADDRESSES[0];
    const open = (ticketId: bigint, expiresAt: bigint, allow: number): number => {
      const existing = ledger.findTicket(900n, ticketId);
      return ledger.openListing(existing >= 0 ? existing : ledger.mintTicket(900n, ticketId, seller), {
        askPriceMinor: 10n + ticketId,
        sellerPayout: ledger.addresses.intern(ADDRESSES[1]),
        integratorIdentity: ledger.addresses.intern(ADDRESSES[2]),
        integratorAuthority: ledger.addresses.intern(ADDRESSES[3]),
        buyerAllow: allow,
        ticketTypeConfig: ledger.events.get(2).ticketTypeConfig,
        expiresAt,
      });
    };
    const seqs = Array.from({ length: 50 }, (_, k) => open(BigInt(k + 1), 2_000_000_000n + BigInt(k), -1));
    const page = (): string => {
      const body = listingsPageBytes(ledger, seqs, noFaults(), new SeededRandom('r'), null);
      const text = body.bytes.toString('utf8');
      body.release();
      return text;
    };
    const first = page();
    const afterFirst = fragmentCounters(ledger);
    // head, seller part and tail: one build each for 50 items of one event and seller.
    expect(afterFirst.builds).toBe(3);
    expect(page()).toBe(first);
    expect(fragmentCounters(ledger).builds).toBe(3);
    // The listing is bought, its ticket relisted with a buyer allow-list: only its tail is new.
    ledger.closeListing(seqs[0]);
    seqs[0] = open(1n, 2_000_000_000n, ledger.addresses.intern(ADDRESSES[4]));
    const relisted = JSON.parse(page()) as {
      items: { buyer_allow: string | null; permit_version: string }[];
    };
    expect(relisted.items[0]).toMatchObject({ buyer_allow: ADDRESSES[4], permit_version: '2' });
    expect(relisted.items[1]).toMatchObject({ buyer_allow: null, permit_version: '1' });
    expect(fragmentCounters(ledger).builds).toBe(4);
  });
});
