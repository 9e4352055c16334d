import type { OrderBody } from './orders-client';
import type { SandboxProcess } from './sandbox-process';

export const CHAOS_EVENT_BASE = 7_000_000n;
export const LISTINGS_PER_EVENT = 10;

export interface PlannedOrder {
  index: number;
  key: string;
  body: OrderBody;
  /** The listing's ask price as seeded; prices never change during a run. */
  listingPriceMinor: string;
  /** Sent at a price the listing does not have: must end rejected/PRICE_CHANGED, nothing signed. */
  wrongPrice: boolean;
  /** One of several buyers of one listing, sent at the same moment to different replicas. */
  contended: boolean;
  /** POSTed a second time with the same key to the other replica: must replay the same order. */
  repeat: boolean;
}

/** What one worker sends at once: one order, or every order of a contended listing. */
export interface WorkUnit {
  listing: { eventId: string; ticketId: string };
  orders: PlannedOrder[];
}

export interface MarketOptions {
  orders: number;
  seed: string;
  buyers: number;
  /** Share of the orders that go to contended listings (default 0.1). */
  contendedShare: number;
  /** Buyers per contended listing (default 3). */
  contenders: number;
  wrongPriceShare: number;
  repeatShare: number;
}

/**
 * How many listings, and which are contended: `orders` orders in all, about `contendedShare` of them in groups
 * of `contenders` (one listing each), spread evenly through the run; the rest one listing per order.
 */
export function marketShape(options: Pick<MarketOptions, 'orders' | 'contendedShare' | 'contenders'>): {
  listings: number;
  contended: Set<number>;
} {
  const groups =
    options.contenders >= 2 ? Math.floor((options.orders * options.contendedShare) / options.contenders) : 0;
  const listings = options.orders - groups * (options.contenders - 1);
  const contended = new Set<number>();
  for (let g = 0; g < groups; g++) contended.add(Math.floor(((g + 0.5) * listings) / groups));
  return { listings, contended };
}

/**
 * Events and listings straight on the sandbox ledger, buyers funded for everything they may buy (a contended
 * listing's every buyer for its price). Orders of a contended listing have distinct buyers.
 */
export async function seedMarket(
  sandbox: SandboxProcess,
  options: MarketOptions,
  rng: () => number,
): Promise<WorkUnit[]> {
  const buyers = Array.from(
    { length: Math.max(options.buyers, options.contenders) },
    (_, i) => `chaos-buyer-${i}`,
  );
  const addresses = new Map<string, string>();
  for (const buyer of buyers) addresses.set(buyer, await sandbox.userAddress(buyer));
  const { listings, contended } = marketShape(options);
  const events = Math.ceil(listings / LISTINGS_PER_EVENT);
  for (let e = 0; e < events; e++) await sandbox.createEvent(CHAOS_EVENT_BASE + BigInt(e));
  // Drawn in listing order before any await, so a seed gives the same market whatever the timing.
  const drafts = Array.from({ length: listings }, (_, l) => {
    const price = BigInt(1_000_000 + Math.floor(rng() * 99_000_000));
    const first = Math.floor(rng() * buyers.length);
    const size = contended.has(l) ? options.contenders : 1;
    const wrongPrice = size === 1 && rng() < options.wrongPriceShare;
    const repeats = Array.from({ length: size }, () => rng() < options.repeatShare);
    return { l, price, first, size, wrongPrice, repeats };
  });
  const spend = new Map<string, bigint>();
  const units: WorkUnit[] = [];
  let index = 0;
  for (const d of drafts) {
    const eventId = (CHAOS_EVENT_BASE + BigInt(Math.floor(d.l / LISTINGS_PER_EVENT))).toString();
    const ticketId = String(d.l + 1);
    const orders: PlannedOrder[] = [];
    for (let j = 0; j < d.size; j++) {
      const buyer = buyers[(d.first + j) % buyers.length];
      spend.set(buyer, (spend.get(buyer) ?? 0n) + d.price);
      const i = index++;
      orders.push({
        index: i,
        key: `chaos-${options.seed}-${i}`,
        body: {
          buyer_subject: buyer,
          buyer_address: addresses.get(buyer) ?? '',
          event_id: eventId,
          ticket_id: ticketId,
          expected_price_minor: (d.wrongPrice ? d.price + 1n : d.price).toString(),
        },
        listingPriceMinor: d.price.toString(),
        wrongPrice: d.wrongPrice,
        contended: d.size > 1,
        repeat: d.repeats[j],
      });
    }
    units.push({ listing: { eventId, ticketId }, orders });
  }
  await mapLimit(drafts, 10, async (d, i) => {
    const { eventId, ticketId } = units[i].listing;
    await sandbox.seedListing(BigInt(eventId), BigInt(ticketId), `chaos-seller-${d.l % 17}`, d.price);
  });
  for (const [buyer, amount] of spend) await sandbox.fund(buyer, amount);
  return units;
}

/** Runs `fn` over `items` with at most `limit` at a time. */
export async function mapLimit<T>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<void>,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(limit, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i], i);
      }
    }),
  );
}
