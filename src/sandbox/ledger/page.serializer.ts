import type { FaultPlan } from '../faults/injector';
import type { SeededRandom } from '../chain/prng';
import type { SandboxLedger } from './ledger';
import { u64Json } from '../chain/u64.codec';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;

const EXTRA = ',"x_sandbox_extra":{"note":"unknown field injected by a fault"}';

/** ASCII text as bytes, for the constant pieces of an item (copied with a JS loop, no string built). */
function asciiBytes(text: string): Uint8Array {
  return Uint8Array.from(text, (c) => c.charCodeAt(0));
}

/** An event's JSON fragments as bytes: its id (quoted and bare) and its royalty list. */
interface EventBytes {
  id: Uint8Array;
  idBare: Uint8Array;
  royalty: Uint8Array;
}

/**
 * Event-level JSON fragments as bytes, kept per ledger for its lifetime: an event never changes once added
 * (id, royalty list and addresses are immutable; a reset builds a new ledger), and a page of 1,000 listings
 * spread over 5,000 events would otherwise rebuild hundreds of them for every page.
 */
const eventBytes = new WeakMap<SandboxLedger, (EventBytes | undefined)[]>();

function eventFragments(ledger: SandboxLedger): (EventBytes | undefined)[] {
  let cache = eventBytes.get(ledger);
  if (cache === undefined) {
    cache = [];
    eventBytes.set(ledger, cache);
  }
  return cache;
}

function buildEventBytes(ledger: SandboxLedger, eventIdx: number): EventBytes {
  const event = ledger.events.get(eventIdx);
  const royalty = `[${event.royalty.map((r) => ledger.addresses.quoted(r)).join(',')}]`;
  return {
    id: Buffer.from(u64Json(event.eventId, false), 'utf8'),
    idBare: Buffer.from(u64Json(event.eventId, true), 'utf8'),
    royalty: Buffer.from(royalty, 'utf8'),
  };
}

/** Which identifier, if any, a null-ids fault blanks in this item. */
function nullPick(plan: FaultPlan, rng: SeededRandom): 0 | 1 | 2 {
  if (plan.nullIdFraction <= 0 || !rng.chance(plan.nullIdFraction)) return 0;
  return rng.chance(0.5) ? 1 : 2;
}

/**
 * Page buffers handed back once a page's bytes have reached the socket, for the next page. A fresh ~1 MB
 * buffer per page is external memory, and V8 answers a stream of those with a scavenge every few pages
 * ("external memory pressure": most of the sandbox's GC time at 1M listings). Only a few are kept; a page
 * whose response never finishes (a dropped connection) simply leaves its buffer to the GC.
 */
const freePageBuffers: Buffer[] = [];
const MAX_FREE_PAGE_BUFFERS = 4;
const MAX_POOLED_PAGE_BYTES = 4 * 1_048_576;

function takePageBuffer(capacity: number): Buffer {
  for (let i = freePageBuffers.length - 1; i >= 0; i--) {
    const buf = freePageBuffers[i];
    if (buf.length >= capacity) {
      freePageBuffers.splice(i, 1);
      return buf;
    }
  }
  return Buffer.allocUnsafeSlow(capacity);
}

function releasePageBuffer(buf: Buffer): void {
  if (freePageBuffers.length < MAX_FREE_PAGE_BUFFERS && buf.length <= MAX_POOLED_PAGE_BYTES)
    freePageBuffers.push(buf);
}

/**
 * A growable byte buffer for one page. Every piece of an item is written as bytes: constant keys from
 * pre-encoded arrays, numbers digit by digit, addresses from the address book's byte table. No per-item
 * string is built (building and flattening them was most of the serializer's time and garbage).
 */
class PageBytes {
  buf: Buffer;
  pos = 0;
  constructor(capacity: number) {
    this.buf = takePageBuffer(capacity);
  }

  ensure(bytes: number): void {
    if (this.pos + bytes <= this.buf.length) return;
    const next = takePageBuffer(Math.max(this.pos + bytes, this.buf.length * 2));
    this.buf.copy(next, 0, 0, this.pos);
    releasePageBuffer(this.buf);
    this.buf = next;
  }

  /** ASCII text (rare pieces: values past 2^53, envelopes). */
  ascii(text: string): void {
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < text.length; i++) buf[pos++] = text.charCodeAt(i);
    this.pos = pos;
  }

  /** A JS loop beats a native copy call for the short pieces of an item. */
  raw(bytes: Uint8Array): void {
    const buf = this.buf;
    let pos = this.pos;
    for (let i = 0; i < bytes.length; i++) buf[pos++] = bytes[i];
    this.pos = pos;
  }

  /** An integer with |value| <= 2^53-1, in decimal, quoted unless `bare`. */
  int(value: number, bare: boolean): void {
    const buf = this.buf;
    let pos = this.pos;
    if (!bare) buf[pos++] = QUOTE;
    let v = value;
    if (v < 0) {
      buf[pos++] = MINUS;
      v = -v;
    }
    let digits = 1;
    for (let p = 10; p <= v; p *= 10) digits++;
    pos += digits;
    let at = pos;
    do {
      const q = Math.floor(v / 10);
      buf[--at] = 0x30 + (v - q * 10);
      v = q;
    } while (v > 0);
    if (!bare) buf[pos++] = QUOTE;
    this.pos = pos;
  }

  bytes(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  /** Gives the buffer back for another page: only once nothing reads bytes() any more. */
  release(): void {
    releasePageBuffer(this.buf);
  }
}

const QUOTE = 0x22;
const MINUS = 0x2d;
const K_FIRST = asciiBytes('{"event_id":');
const K_NEXT = asciiBytes(',{"event_id":');
const K_NULL = asciiBytes('null');
const K_TICKET = asciiBytes(',"ticket_id":');
const K_PRICE = asciiBytes(',"ask_price_minor":');
const K_SELLER = asciiBytes(',"seller":');
const K_PAYOUT = asciiBytes(',"seller_payout":');
const K_PERMIT = asciiBytes(',"permit_version":');
const K_ROYALTY = asciiBytes(',"royalty_destinations":');
const K_TYPE = asciiBytes(',"ticket_type_config":');
const K_MINT = asciiBytes(',"stablecoin_mint":');
const K_ALLOW = asciiBytes(',"buyer_allow":');
const K_IDENTITY = asciiBytes(',"listing_integrator_identity":');
const K_AUTHORITY = asciiBytes(',"listing_integrator_authority":');
const K_EXPIRES = asciiBytes(',"expires_at":');
const K_EXTRA = asciiBytes(EXTRA);
const K_END = asciiBytes('}');

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
  const events = eventFragments(ledger);
  const mint = Buffer.from(a.quoted(ledger.stablecoinMint), 'utf8');
  const extra = plan.extraFields;
  for (let i = 0; i < seqs.length; i++) {
    const s = seqs[i];
    const eventIdx = l.eventIdx[s];
    const ev = events[eventIdx] ?? (events[eventIdx] = buildEventBytes(ledger, eventIdx));
    const blank = nullPick(plan, rng);
    const ticket = l.ticketIdx[s];
    // Number columns first: formatting a number is far cheaper than reading and formatting a bigint.
    const ticketNum = t.ticketIdNum[ticket];
    const priceNum = l.askPriceNum[s];
    const permitNum = l.permitVersionNum[s];
    const expiresNum = l.expiresAtSec[s];
    out.ensure(ITEM_BYTES + 8 * a.maxQuotedBytes + ev.royalty.length + mint.length);
    out.raw(i === 0 ? K_FIRST : K_NEXT);
    out.raw(blank === 1 ? K_NULL : asNumber ? ev.idBare : ev.id);
    out.raw(K_TICKET);
    if (blank === 2) out.raw(K_NULL);
    else if (ticketNum >= 0) out.int(ticketNum, asNumber);
    else out.ascii(u64Json(t.ticketId[ticket], asNumber));
    out.raw(K_PRICE);
    if (priceNum >= 0) out.int(priceNum, asNumber);
    else out.ascii(u64Json(l.askPriceMinor[s], asNumber));
    out.raw(K_SELLER);
    out.pos = a.writeQuoted(l.seller[s], out.buf, out.pos);
    out.raw(K_PAYOUT);
    out.pos = a.writeQuoted(l.sellerPayout[s], out.buf, out.pos);
    out.raw(K_PERMIT);
    if (permitNum >= 0) out.int(permitNum, asNumber);
    else out.ascii(u64Json(l.permitVersion[s], asNumber));
    out.raw(K_ROYALTY);
    out.raw(ev.royalty);
    out.raw(K_TYPE);
    out.pos = a.writeQuoted(l.ticketTypeConfig[s], out.buf, out.pos);
    out.raw(K_MINT);
    out.raw(mint);
    out.raw(K_ALLOW);
    out.pos = a.writeQuoted(l.buyerAllow[s], out.buf, out.pos);
    out.raw(K_IDENTITY);
    out.pos = a.writeQuoted(l.integratorIdentity[s], out.buf, out.pos);
    out.raw(K_AUTHORITY);
    out.pos = a.writeQuoted(l.integratorAuthority[s], out.buf, out.pos);
    out.raw(K_EXPIRES);
    if (Math.abs(expiresNum) <= MAX_SAFE) out.int(expiresNum, asNumber);
    else out.ascii(u64Json(l.expiresAt[s], asNumber));
    if (extra) out.raw(K_EXTRA);
    out.raw(K_END);
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
  const text = out.bytes().toString('utf8');
  out.release();
  return text;
}

/** A page's bytes and how to give their buffer back once they have been sent (see takePageBuffer). */
export interface PageBody {
  bytes: Buffer;
  release: () => void;
}

/** A whole listings page (contract 2.6) as bytes, ready to send; release() once they are sent. */
export function listingsPageBytes(
  ledger: SandboxLedger,
  seqs: readonly number[],
  plan: FaultPlan,
  rng: SeededRandom,
  nextCursor: string | null,
): PageBody {
  const out = new PageBytes(ITEM_BYTES * Math.max(1, seqs.length));
  out.ascii('{"items":[');
  writeListings(out, ledger, seqs, plan, rng);
  out.ensure(256 + (nextCursor?.length ?? 0));
  out.ascii(
    `],"next_cursor":${nextCursor === null ? 'null' : `"${nextCursor}"`}${plan.extraFields ? EXTRA : ''}}`,
  );
  return { bytes: out.bytes(), release: () => out.release() };
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
