import type { FaultPlan } from '../faults/injector';
import type { SeededRandom } from '../chain/prng';
import type { SandboxLedger } from './ledger';
import { u64Json } from '../chain/u64.codec';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

/** u64Json for a value already known to be an exact number (|v| <= 2^53-1). */
function numJson(value: number, asNumber: boolean): string {
  return asNumber ? `${value}` : `"${value}"`;
}

const EXTRA = ',"x_sandbox_extra":{"note":"unknown field injected by a fault"}';

/** Per-page cache of event-level JSON fragments, which repeat across the items of a page. */
class EventFragments {
  private readonly cache = new Map<number, { id: string; royalty: string }>();
  constructor(
    private readonly ledger: SandboxLedger,
    private readonly asNumber: boolean,
  ) {}

  get(eventIdx: number): { id: string; royalty: string } {
    let entry = this.cache.get(eventIdx);
    if (entry === undefined) {
      const event = this.ledger.events.get(eventIdx);
      const royalty = `[${event.royalty.map((r) => this.ledger.addresses.quoted(r)).join(',')}]`;
      entry = { id: u64Json(event.eventId, this.asNumber), royalty };
      this.cache.set(eventIdx, entry);
    }
    return entry;
  }
}

/** Which identifier, if any, a null-ids fault blanks in this item. */
function nullPick(plan: FaultPlan, rng: SeededRandom): 0 | 1 | 2 {
  if (plan.nullIdFraction <= 0 || !rng.chance(plan.nullIdFraction)) return 0;
  return rng.chance(0.5) ? 1 : 2;
}

/**
 * Listing items as JSON text, built by string concatenation from the columns: JSON.stringify of a million
 * freshly built objects is several times slower and allocates far more. Address and event fragments are
 * cached, so per item only the four 64-bit numbers are formatted.
 */
export function serializeListings(
  ledger: SandboxLedger,
  seqs: readonly number[],
  plan: FaultPlan,
  rng: SeededRandom,
): string {
  const l = ledger.listings;
  const a = ledger.addresses;
  const asNumber = plan.u64AsNumber;
  const events = new EventFragments(ledger, asNumber);
  const mint = a.quoted(ledger.stablecoinMint);
  const t = ledger.tickets;
  const parts: string[] = [];
  for (let i = 0; i < seqs.length; i++) {
    const s = seqs[i];
    const ev = events.get(l.eventIdx[s]);
    const blank = nullPick(plan, rng);
    const ticket = l.ticketIdx[s];
    // Number columns first: formatting a number is far cheaper than reading and formatting a bigint.
    const ticketNum = t.ticketIdNum[ticket];
    const priceNum = l.askPriceNum[s];
    const permitNum = l.permitVersionNum[s];
    const expiresNum = l.expiresAtSec[s];
    parts.push(
      `{"event_id":${blank === 1 ? 'null' : ev.id}` +
        `,"ticket_id":${blank === 2 ? 'null' : ticketNum >= 0 ? numJson(ticketNum, asNumber) : u64Json(t.ticketId[ticket], asNumber)}` +
        `,"ask_price_minor":${priceNum >= 0 ? numJson(priceNum, asNumber) : u64Json(l.askPriceMinor[s], asNumber)}` +
        `,"seller":${a.quoted(l.seller[s])},"seller_payout":${a.quoted(l.sellerPayout[s])}` +
        `,"permit_version":${permitNum >= 0 ? numJson(permitNum, asNumber) : u64Json(l.permitVersion[s], asNumber)}` +
        `,"royalty_destinations":${ev.royalty},"ticket_type_config":${a.quoted(l.ticketTypeConfig[s])}` +
        `,"stablecoin_mint":${mint},"buyer_allow":${a.quoted(l.buyerAllow[s])}` +
        `,"listing_integrator_identity":${a.quoted(l.integratorIdentity[s])}` +
        `,"listing_integrator_authority":${a.quoted(l.integratorAuthority[s])}` +
        `,"expires_at":${Math.abs(expiresNum) <= MAX_SAFE ? numJson(expiresNum, asNumber) : u64Json(l.expiresAt[s], asNumber)}` +
        `${plan.extraFields ? EXTRA : ''}}`,
    );
  }
  return parts.join(',');
}

export function serializeEvents(
  ledger: SandboxLedger,
  indices: readonly number[],
  plan: FaultPlan,
  rng: SeededRandom,
): string {
  return indices
    .map((index) => {
      const e = ledger.events.get(index);
      const id = nullPick(plan, rng) === 0 ? u64Json(e.eventId, plan.u64AsNumber) : 'null';
      const royalty = e.royalty.map((r) => ledger.addresses.quoted(r)).join(',');
      return (
        `{"event_id":${id},"name":${e.nameJson},"start_at":${e.startAtJson},"venue":${e.venueJson}` +
        `,"royalty_destinations":[${royalty}],"ticket_type_config":${ledger.addresses.quoted(e.ticketTypeConfig)}` +
        `${plan.extraFields ? EXTRA : ''}}`
      );
    })
    .join(',');
}

/** The page envelope (contract 2.6); `next_cursor` is null on the last page. */
export function pageJson(itemsJson: string, nextCursor: string | null, extraFields: boolean): string {
  const cursor = nextCursor === null ? 'null' : `"${nextCursor}"`;
  return `{"items":[${itemsJson}],"next_cursor":${cursor}${extraFields ? EXTRA : ''}}`;
}
