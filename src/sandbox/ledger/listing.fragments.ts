/**
 * The pieces of a listing item as JSON bytes: how each piece is written from the ledger's columns (the
 * piecewise writers, the reference bytes), and the per-ledger cache of those pieces as byte fragments that
 * listing.writer.ts copies in around each item's numbers.
 */
import type { SandboxLedger } from './ledger';
import { u64Json } from '../chain/u64.codec';
import type { AddressBook } from './address.book';
import { asciiBytes, PageBytes } from './page.bytes';

const K_ITEM = asciiBytes('{"event_id":');
export const K_NULL = asciiBytes('null');
const K_TICKET = asciiBytes(',"ticket_id":');
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

/** Upper bound of one item's bytes besides its addresses and royalty list: 4 numbers, keys, extras. */
export const ITEM_BYTES = 1024;

/** An event's JSON fragments as bytes: its id (quoted and bare) and its royalty list. */
export interface EventBytes {
  id: Uint8Array;
  idBare: Uint8Array;
  royalty: Uint8Array;
}

/** A cached fragment and the values it encodes (k1..k4; unused keys are 0). */
interface Fragment {
  k1: number;
  k2: number;
  k3: number;
  k4: number;
  bytes: Uint8Array;
}

/** Seller fragments are direct-mapped on the seller's address index: at most this many (~130 bytes each). */
const SELLER_SLOTS = 4096;
/** Kept fragments are copied into slabs of this size (see build); a longer one gets its own buffer. */
const SLAB_BYTES = 65_536;

/**
 * Byte fragments of listing items, kept per ledger for its lifetime. Each fragment is keyed by EVERY value
 * it encodes and is checked against them on each use, so it can never be stale: a listing that is bought,
 * cancelled, expires or is replaced by a new one (listings are append-only: a sequence's fields never change)
 * simply stops being served or reads other keys. Events and addresses never change once added (a reset
 * builds a new ledger), so the per-event pieces (id, royalty list) need no check. A fragment is a copy of the
 * bytes the piecewise writer produces for the same values, so both paths give the same bytes by construction
 * (and listing.writer.spec.ts compares them).
 *
 * An item is: head (per event), ticket id, price, seller part (per seller and payout), permit version, tail
 * (royalty list, ticket type config, mint, buyer_allow, integrator identity and authority: per event, two
 * ways), expires_at. Three copies and four numbers per item. The fragments live back to back in shared
 * slabs (see build). Memory: per event ~40 bytes of heads per id variant and up to two ~350-byte tails;
 * seller parts bounded by SELLER_SLOTS. Caching each item's bytes instead would cost ~570 bytes per listing
 * (570 MB at 1M listings).
 */
export class ItemFragments {
  readonly events: (EventBytes | undefined)[] = [];
  /** `{"event_id":<id>,"ticket_id":`, index eventIdx * 2 + (bare ids ? 1 : 0). */
  readonly heads: (Uint8Array | undefined)[] = [];
  /**
   * `,"royalty_destinations":[…],"ticket_type_config":…,"stablecoin_mint":…,"buyer_allow":…,
   * "listing_integrator_identity":…,"listing_integrator_authority":…,"expires_at":`, two ways per event
   * (k1..k4 = type config, buyer allow, identity, authority).
   */
  readonly tails: (Fragment | undefined)[] = [];
  /** `,"seller":…,"seller_payout":…,"permit_version":` (k1 = seller, k2 = payout). */
  readonly sellers: (Fragment | undefined)[] = [];
  /** Fragment reads and (re)builds (a read that had to build counts in both), for tests and profiling. */
  uses = 0;
  builds = 0;
  /** Where fragments are built before being copied out (never a pooled page buffer). */
  readonly scratch = new PageBytes(ITEM_BYTES, false);
  /** Where kept fragments live (see build). */
  slab = new Uint8Array(SLAB_BYTES);
  slabUsed = 0;
  constructor(readonly mint: Uint8Array) {}
}

const fragmentsByLedger = new WeakMap<SandboxLedger, ItemFragments>();

export function fragmentsOf(ledger: SandboxLedger): ItemFragments {
  let fragments = fragmentsByLedger.get(ledger);
  if (fragments === undefined) {
    fragments = new ItemFragments(Buffer.from(ledger.addresses.quoted(ledger.stablecoinMint), 'utf8'));
    fragmentsByLedger.set(ledger, fragments);
  }
  return fragments;
}

/** How often the ledger's cached fragments were used and built so far (tests, profiling). */
export function fragmentCounters(ledger: SandboxLedger): { uses: number; builds: number } {
  const { uses, builds } = fragmentsOf(ledger);
  return { uses, builds };
}

export function eventBytesOf(f: ItemFragments, ledger: SandboxLedger, eventIdx: number): EventBytes {
  let ev = f.events[eventIdx];
  if (ev === undefined) {
    const event = ledger.events.get(eventIdx);
    const royalty = `[${event.royalty.map((r) => ledger.addresses.quoted(r)).join(',')}]`;
    ev = {
      id: Buffer.from(u64Json(event.eventId, false), 'utf8'),
      idBare: Buffer.from(u64Json(event.eventId, true), 'utf8'),
      royalty: Buffer.from(royalty, 'utf8'),
    };
    f.events[eventIdx] = ev;
  }
  return ev;
}

// The piecewise writers: the reference bytes, and what every fragment is built from.

export function writeHead(out: PageBytes, ev: EventBytes, nullEvent: boolean, bare: boolean): void {
  out.raw(K_ITEM);
  out.raw(nullEvent ? K_NULL : bare ? ev.idBare : ev.id);
  out.raw(K_TICKET);
}

export function writeSellerPart(out: PageBytes, a: AddressBook, seller: number, payout: number): void {
  out.raw(K_SELLER);
  out.pos = a.writeQuoted(seller, out.buf, out.pos);
  out.raw(K_PAYOUT);
  out.pos = a.writeQuoted(payout, out.buf, out.pos);
  out.raw(K_PERMIT);
}

export function writeEventPart(out: PageBytes, a: AddressBook, ev: EventBytes, typeConfig: number): void {
  out.raw(K_ROYALTY);
  out.raw(ev.royalty);
  out.raw(K_TYPE);
  out.pos = a.writeQuoted(typeConfig, out.buf, out.pos);
}

export function writeSharedPart(
  out: PageBytes,
  a: AddressBook,
  mint: Uint8Array,
  allow: number,
  identity: number,
  authority: number,
): void {
  out.raw(K_MINT);
  out.raw(mint);
  out.raw(K_ALLOW);
  out.pos = a.writeQuoted(allow, out.buf, out.pos);
  out.raw(K_IDENTITY);
  out.pos = a.writeQuoted(identity, out.buf, out.pos);
  out.raw(K_AUTHORITY);
  out.pos = a.writeQuoted(authority, out.buf, out.pos);
  out.raw(K_EXPIRES);
}

/** Room for any item's bytes besides its royalty list and mint (ITEM_BYTES covers keys and numbers). */
export function roomFor(ledger: SandboxLedger): number {
  return ITEM_BYTES + 8 * ledger.addresses.maxQuotedBytes;
}

/**
 * A fragment built by `write` in the scratch buffer, copied into the ledger's fragment slab and returned as
 * a view of it. Fragments sit back to back in a few shared 64 KB slabs rather than each in its own small
 * ArrayBuffer: a page reads four of them per item, and inside a walk (where parsing the previous page has
 * flushed the CPU caches) scattered backing stores made each read a chain of cache misses.
 */
function build(f: ItemFragments, room: number, write: (out: PageBytes) => void): Uint8Array {
  const scratch = f.scratch;
  if (scratch.buf.length < room) scratch.buf = Buffer.alloc(room);
  scratch.pos = 0;
  write(scratch);
  f.builds++;
  const length = scratch.pos;
  if (length > SLAB_BYTES / 4) return scratch.copyFrom(0);
  if (f.slabUsed + length > f.slab.length) {
    f.slab = new Uint8Array(SLAB_BYTES);
    f.slabUsed = 0;
  }
  const view = f.slab.subarray(f.slabUsed, f.slabUsed + length);
  view.set(scratch.buf.subarray(0, length));
  f.slabUsed += length;
  return view;
}

export function headOf(f: ItemFragments, ledger: SandboxLedger, eventIdx: number, bare: boolean): Uint8Array {
  const k = eventIdx * 2 + (bare ? 1 : 0);
  const head = f.heads[k];
  if (head !== undefined) return head;
  const ev = eventBytesOf(f, ledger, eventIdx);
  return (f.heads[k] = build(f, ITEM_BYTES, (out) => writeHead(out, ev, false, bare)));
}

export function sellerPartOf(
  f: ItemFragments,
  ledger: SandboxLedger,
  seller: number,
  payout: number,
): Uint8Array {
  const slot = seller & (SELLER_SLOTS - 1);
  const part = f.sellers[slot];
  if (keyed(part, seller, payout, 0, 0)) return part.bytes;
  const bytes = build(f, roomFor(ledger), (out) => writeSellerPart(out, ledger.addresses, seller, payout));
  f.sellers[slot] = { k1: seller, k2: payout, k3: 0, k4: 0, bytes };
  return bytes;
}

/** Whether `fragment` exists and encodes exactly these values. */
function keyed(
  fragment: Fragment | undefined,
  k1: number,
  k2: number,
  k3: number,
  k4: number,
): fragment is Fragment {
  return (
    fragment !== undefined &&
    fragment.k1 === k1 &&
    fragment.k2 === k2 &&
    fragment.k3 === k3 &&
    fragment.k4 === k4
  );
}

/** Two ways per event, the most recently used first. */
export function tailOf(f: ItemFragments, ledger: SandboxLedger, eventIdx: number, s: number): Uint8Array {
  const l = ledger.listings;
  const typeConfig = l.ticketTypeConfig[s];
  const allow = l.buyerAllow[s];
  const identity = l.integratorIdentity[s];
  const authority = l.integratorAuthority[s];
  const k = eventIdx * 2;
  const first = f.tails[k];
  if (keyed(first, typeConfig, allow, identity, authority)) return first.bytes;
  const second = f.tails[k + 1];
  if (keyed(second, typeConfig, allow, identity, authority)) {
    f.tails[k] = second;
    f.tails[k + 1] = first;
    return second.bytes;
  }
  const ev = eventBytesOf(f, ledger, eventIdx);
  const bytes = build(f, roomFor(ledger) + ev.royalty.length + f.mint.length, (out) => {
    writeEventPart(out, ledger.addresses, ev, typeConfig);
    writeSharedPart(out, ledger.addresses, f.mint, allow, identity, authority);
  });
  f.tails[k + 1] = { k1: typeConfig, k2: allow, k3: identity, k4: authority, bytes };
  return bytes;
}
