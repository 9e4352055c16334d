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
 * A growable byte buffer for one page. ascii() is for the ASCII pieces of an item (keys, numbers, ids,
 * base58 addresses); address-book entries are copied as their UTF-8 bytes.
 */
class PageBytes {
  buf: Buffer;
  pos = 0;
  constructor(capacity: number) {
    this.buf = Buffer.allocUnsafe(capacity);
  }

  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const next = Buffer.allocUnsafe(Math.max(this.pos + bytes, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  /** A JS loop beats a native write call for the short pieces of an item. */
  ascii(text: string): void {
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < text.length; i++) buf[pos++] = text.charCodeAt(i);
    this.pos = pos;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

/** Upper bound of one item's bytes besides its addresses and royalty list: 4 numbers, keys, extras. */
const ITEM_BYTES = 1024;

/**
 * Listing items as JSON bytes, written straight into one buffer from the columns: no per-item string, no
 * bigint unless a value is past 2^53, addresses copied from the address book's byte table, and no UTF-8
 * encoding on send. Faults still apply per item (null ids, u64 as numbers, extra fields).
 */
function writeListings(
  out: PageBytes,
  ledger: SandboxLedger,
  seqs: readonly number[],
  plan: FaultPlan,
  rng: SeededRandom,
): void {
  const l = ledger.listings;
  const a = ledger.addresses;
  const t = ledger.tickets;
  const asNumber = plan.u64AsNumber;
  const events = new EventFragments(ledger, asNumber);
  const mint = a.quoted(ledger.stablecoinMint);
  const extra = plan.extraFields ? EXTRA : '';
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
    const ticketId =
      blank === 2
        ? 'null'
        : ticketNum >= 0
          ? numJson(ticketNum, asNumber)
          : u64Json(t.ticketId[ticket], asNumber);
    const price = priceNum >= 0 ? numJson(priceNum, asNumber) : u64Json(l.askPriceMinor[s], asNumber);
    out.ensure(ITEM_BYTES + 8 * a.maxQuotedBytes + ev.royalty.length);
    out.ascii(
      `${i === 0 ? '' : ','}{"event_id":${blank === 1 ? 'null' : ev.id},"ticket_id":${ticketId}` +
        `,"ask_price_minor":${price},"seller":`,
    );
    out.pos = a.writeQuoted(l.seller[s], out.buf, out.pos);
    out.ascii(',"seller_payout":');
    out.pos = a.writeQuoted(l.sellerPayout[s], out.buf, out.pos);
    const permit = permitNum >= 0 ? numJson(permitNum, asNumber) : u64Json(l.permitVersion[s], asNumber);
    out.ascii(`,"permit_version":${permit},"royalty_destinations":${ev.royalty},"ticket_type_config":`);
    out.pos = a.writeQuoted(l.ticketTypeConfig[s], out.buf, out.pos);
    out.ascii(`,"stablecoin_mint":${mint},"buyer_allow":`);
    out.pos = a.writeQuoted(l.buyerAllow[s], out.buf, out.pos);
    out.ascii(',"listing_integrator_identity":');
    out.pos = a.writeQuoted(l.integratorIdentity[s], out.buf, out.pos);
    out.ascii(',"listing_integrator_authority":');
    out.pos = a.writeQuoted(l.integratorAuthority[s], out.buf, out.pos);
    const expires =
      Math.abs(expiresNum) <= MAX_SAFE ? numJson(expiresNum, asNumber) : u64Json(l.expiresAt[s], asNumber);
    out.ascii(`,"expires_at":${expires}${extra}}`);
  }
}

/** Listing items as JSON text (comma-separated, no brackets), e.g. for the admin listing view. */
export function serializeListings(
  ledger: SandboxLedger,
  seqs: readonly number[],
  plan: FaultPlan,
  rng: SeededRandom,
): string {
  const out = new PageBytes(ITEM_BYTES * Math.max(1, seqs.length));
  writeListings(out, ledger, seqs, plan, rng);
  return out.bytes().toString('utf8');
}

/** A whole listings page (contract 2.6) as bytes, ready to send. */
export function listingsPageBytes(
  ledger: SandboxLedger,
  seqs: readonly number[],
  plan: FaultPlan,
  rng: SeededRandom,
  nextCursor: string | null,
): Buffer {
  const out = new PageBytes(ITEM_BYTES * Math.max(1, seqs.length));
  out.ascii('{"items":[');
  writeListings(out, ledger, seqs, plan, rng);
  out.ensure(256 + (nextCursor?.length ?? 0));
  out.ascii(
    `],"next_cursor":${nextCursor === null ? 'null' : `"${nextCursor}"`}${plan.extraFields ? EXTRA : ''}}`,
  );
  return out.bytes();
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
