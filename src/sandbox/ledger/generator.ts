import { SeededRandom } from '../chain/prng';
import type { SandboxLedger } from './ledger';

export interface GeneratorInput {
  seed: string;
  events: number;
  listings: number;
  nowMs: number;
}

const HOUR_MS = 3_600_000;
const NAMES = [
  'Midnight Echoes',
  'The Brass Parade',
  'Café Tacuba Revival',
  'Neon "Live" Sessions',
  'Orquesta Sinfónica',
];
const VENUES = ['Arena Norte', 'Teatro Colón', 'Riverside Hall', 'Stade Vélodrome', 'Forum Ost'];
/** Events whose ids sit past 2^63 and whose ticket ids straddle 2^53: catch clients that use `number`. */
const BIG_EVENT_EVERY = 7;

/** Integrator subject whose custodial wallet is the listing integrator authority of generated listings. */
export const GENERATED_INTEGRATOR_SUBJECT = 'sandbox-integrator';

/** User subject of generated seller k; these are real custodial wallets, so tests can act as the seller. */
export function generatedSellerSubject(k: number): string {
  return `seller-${k}`;
}

export function generatedSellerCount(listings: number): number {
  return Math.min(1000, Math.max(8, Math.ceil(listings / 200)));
}

/**
 * Deterministic dataset from SANDBOX_SEED: upcoming events and a skewed listing distribution (Zipf over a
 * shuffled event order, so a few events hold most listings). Listings are interleaved across events and
 * priced at random, so insertion order is not price order. Each listing sells its own ticket.
 */
export function generateDataset(ledger: SandboxLedger, input: GeneratorInput): void {
  const rng = new SeededRandom(input.seed, 'dataset');
  const keys = ledger.keys;
  const royaltyPool = [0, 1, 2, 3, 4].map((k) => keys.syntheticAddress('royalty', k));
  for (let i = 0; i < input.events; i++) {
    const big = i % BIG_EVENT_EVERY === BIG_EVENT_EVERY - 1;
    ledger.createEvent({
      eventId: big ? 2n ** 63n + BigInt(i) * 1009n : BigInt(100_000 + i),
      name: `${NAMES[i % NAMES.length]} #${i + 1}`,
      startAtMs: input.nowMs + (i + 1) * 6 * HOUR_MS + rng.int(60) * 60_000,
      venue: VENUES[rng.int(VENUES.length)],
      royalty: royaltyPool.slice(i % 3, (i % 3) + (i % 3)),
      ticketTypeConfig: i % 2 === 1 ? keys.syntheticAddress('ticket-type-config', i) : null,
    });
  }
  if (input.events === 0 || input.listings === 0) return;
  generateListings(ledger, input, rng);
}

function eventWeights(count: number, rng: SeededRandom): Float64Array {
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = rng.int(i + 1);
    [order[i], order[j]] = [order[j], order[i]];
  }
  const cumulative = new Float64Array(count);
  let total = 0;
  for (let rank = 0; rank < count; rank++) {
    total += 1 / Math.pow(rank + 1, 1.07);
    cumulative[order[rank]] = 1 / Math.pow(rank + 1, 1.07);
  }
  let running = 0;
  for (let i = 0; i < count; i++) cumulative[i] = running += cumulative[i] / total;
  return cumulative;
}

function sample(cumulative: Float64Array, u: number): number {
  let lo = 0;
  let hi = cumulative.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cumulative[mid] < u) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

function generateListings(ledger: SandboxLedger, input: GeneratorInput, rng: SeededRandom): void {
  const { keys, addresses, tickets, listings } = ledger;
  const count = input.listings;
  const cumulative = eventWeights(input.events, rng);
  const eventOf = new Uint32Array(count);
  const perEvent = new Uint32Array(input.events);
  for (let i = 0; i < count; i++) perEvent[(eventOf[i] = sample(cumulative, rng.next()))]++;

  const sellers = Array.from({ length: generatedSellerCount(count) }, (_, k) => ({
    wallet: addresses.intern(keys.address('user', generatedSellerSubject(k))),
    payout: addresses.intern(keys.syntheticAddress('payout', k)),
  }));
  const authority = addresses.intern(keys.address('integrator', GENERATED_INTEGRATOR_SUBJECT));
  const identity = addresses.intern(keys.syntheticAddress('integrator-identity'));
  const allowedBuyer = addresses.intern(keys.syntheticAddress('allowed-buyer'));

  const localIds = Array.from({ length: input.events }, (_, e) => new Uint32Array(perEvent[e]));
  const filled = new Uint32Array(input.events);
  const base = (e: number): bigint => (ledger.events.get(e).eventId >= 2n ** 63n ? 2n ** 53n - 5n : 1n);
  tickets.reserve(tickets.size + count + 1024);
  listings.reserve(listings.size + count + 1024);
  for (let i = 0; i < count; i++) {
    const e = eventOf[i];
    const event = ledger.events.get(e);
    const seller = sellers[rng.int(sellers.length)];
    const local = filled[e]++;
    const ticket = tickets.add(e, base(e) + BigInt(local), seller.wallet, false);
    localIds[e][local] = ticket;
    const rare = rng.chance(0.0002);
    ledger.openListing(ticket, {
      askPriceMinor: rare ? 2n ** 53n + BigInt(rng.nextUint32()) : BigInt(500 + rng.int(40_000)) * 10_000n,
      sellerPayout: seller.payout,
      integratorIdentity: identity,
      integratorAuthority: authority,
      buyerAllow: rng.chance(0.005) ? allowedBuyer : -1,
      ticketTypeConfig: event.ticketTypeConfig,
      expiresAt: BigInt(Math.floor(event.startAtMs / 1000)),
    });
  }
  for (let e = 0; e < input.events; e++) tickets.registerGenerated(e, base(e), localIds[e]);
}
