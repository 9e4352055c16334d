import type { FaultPlan } from '../faults/injector';
import type { SeededRandom } from '../chain/prng';
import type { SandboxLedger } from './ledger';
import { u64Json } from '../chain/u64.codec';
import { asciiBytes, type PageBytes, writeAscii, writeInt } from './page.bytes';
import {
  eventBytesOf,
  fragmentsOf,
  headOf,
  type ItemFragments,
  K_NULL,
  roomFor,
  sellerPartOf,
  tailOf,
  writeEventPart,
  writeHead,
  writeSellerPart,
  writeSharedPart,
} from './listing.fragments';

export const EXTRA = ',"x_sandbox_extra":{"note":"unknown field injected by a fault"}';

const MAX_SAFE = Number.MAX_SAFE_INTEGER;
const COMMA = 0x2c;
const END = 0x7d;
const K_COMMA = asciiBytes(',');
const K_PRICE = asciiBytes(',"ask_price_minor":');
const K_EXTRA = asciiBytes(EXTRA);
const K_END = asciiBytes('}');

/** Which identifier, if any, a null-ids fault blanks in this item. */
export function nullPick(plan: FaultPlan, rng: SeededRandom): 0 | 1 | 2 {
  if (plan.nullIdFraction <= 0 || !rng.chance(plan.nullIdFraction)) return 0;
  return rng.chance(0.5) ? 1 : 2;
}

/** One item, every piece written from the columns (faulted pages and the reference path). */
function writeItemPiecewise(
  out: PageBytes,
  ledger: SandboxLedger,
  f: ItemFragments,
  s: number,
  blank: 0 | 1 | 2,
  bare: boolean,
  extra: boolean,
): void {
  const l = ledger.listings;
  const t = ledger.tickets;
  const a = ledger.addresses;
  const ev = eventBytesOf(f, ledger, l.eventIdx[s]);
  const ticket = l.ticketIdx[s];
  writeHead(out, ev, blank === 1, bare);
  if (blank === 2) out.raw(K_NULL);
  else out.pos = writeU64(out.buf, out.pos, t.ticketIdNum[ticket], t.ticketId[ticket], bare);
  out.raw(K_PRICE);
  out.pos = writeU64(out.buf, out.pos, l.askPriceNum[s], l.askPriceMinor[s], bare);
  writeSellerPart(out, a, l.seller[s], l.sellerPayout[s]);
  out.pos = writeU64(out.buf, out.pos, l.permitVersionNum[s], l.permitVersion[s], bare);
  writeEventPart(out, a, ev, l.ticketTypeConfig[s]);
  writeSharedPart(out, a, f.mint, l.buyerAllow[s], l.integratorIdentity[s], l.integratorAuthority[s]);
  const expiresNum = l.expiresAtSec[s];
  if (Math.abs(expiresNum) <= MAX_SAFE) out.int(expiresNum, bare);
  else out.ascii(u64Json(l.expiresAt[s], bare));
  if (extra) out.raw(K_EXTRA);
  out.raw(K_END);
}

/** `,"ask_price_minor":` as stores: cheaper than a copy call for 19 bytes between two numbers. */
function writePriceKey(buf: Buffer, pos: number): number {
  buf[pos] = 0x2c; // ,
  buf[pos + 1] = 0x22; // "
  buf[pos + 2] = 0x61; // a
  buf[pos + 3] = 0x73; // s
  buf[pos + 4] = 0x6b; // k
  buf[pos + 5] = 0x5f; // _
  buf[pos + 6] = 0x70; // p
  buf[pos + 7] = 0x72; // r
  buf[pos + 8] = 0x69; // i
  buf[pos + 9] = 0x63; // c
  buf[pos + 10] = 0x65; // e
  buf[pos + 11] = 0x5f; // _
  buf[pos + 12] = 0x6d; // m
  buf[pos + 13] = 0x69; // i
  buf[pos + 14] = 0x6e; // n
  buf[pos + 15] = 0x6f; // o
  buf[pos + 16] = 0x72; // r
  buf[pos + 17] = 0x22; // "
  buf[pos + 18] = 0x3a; // :
  return pos + 19;
}

/**
 * A u64 column value: its number column when it holds the value (>= 0: below 2^53), else the bigint's
 * decimal text; quoted unless `bare`. Returns the position after it.
 */
function writeU64(buf: Buffer, pos: number, num: number, big: bigint, bare: boolean): number {
  return num >= 0 ? writeInt(buf, pos, num, bare) : writeAscii(buf, pos, u64Json(big, bare));
}

/** Writes `bytes` at `pos`; returns the position after them. */
function put(buf: Buffer, pos: number, bytes: Uint8Array): number {
  buf.set(bytes, pos);
  return pos + bytes.length;
}

/**
 * Listing items as JSON bytes (comma-separated), written straight into one buffer from the columns: no
 * per-item string, no bigint unless a value is past 2^53, no UTF-8 encoding on send. With `cached` (the
 * default) and no null-id fault, an item is four cached fragments copied in around its four numbers;
 * otherwise every piece is written from the columns (the reference the cache is tested against). Faults
 * still apply per item (null ids, u64 as numbers, extra fields).
 */
export function writeListings(
  out: PageBytes,
  ledger: SandboxLedger,
  seqs: readonly number[],
  plan: FaultPlan,
  rng: SeededRandom,
  cached = true,
): void {
  const f = fragmentsOf(ledger);
  const bare = plan.u64AsNumber;
  const extra = plan.extraFields;
  const room = roomFor(ledger) + f.mint.length;
  if (!cached || plan.nullIdFraction > 0) {
    for (let i = 0; i < seqs.length; i++) {
      const blank = nullPick(plan, rng);
      out.ensure(room + eventBytesOf(f, ledger, ledger.listings.eventIdx[seqs[i]]).royalty.length);
      if (i > 0) out.raw(K_COMMA);
      writeItemPiecewise(out, ledger, f, seqs[i], blank, bare, extra);
    }
    return;
  }
  const l = ledger.listings;
  const t = ledger.tickets;
  let buf = out.buf;
  let pos = out.pos;
  let uses = 0;
  for (let i = 0; i < seqs.length; i++) {
    const s = seqs[i];
    const eventIdx = l.eventIdx[s];
    const head = headOf(f, ledger, eventIdx, bare);
    const sellerPart = sellerPartOf(f, ledger, l.seller[s], l.sellerPayout[s]);
    const tail = tailOf(f, ledger, eventIdx, s);
    uses += 3;
    if (pos + room + tail.length > buf.length) {
      out.pos = pos;
      out.ensure(room + tail.length);
      buf = out.buf;
    }
    if (i > 0) buf[pos++] = COMMA;
    pos = put(buf, pos, head);
    // Number columns first: formatting a number is far cheaper than reading and formatting a bigint.
    const ticket = l.ticketIdx[s];
    pos = writeU64(buf, pos, t.ticketIdNum[ticket], t.ticketId[ticket], bare);
    pos = writePriceKey(buf, pos);
    pos = writeU64(buf, pos, l.askPriceNum[s], l.askPriceMinor[s], bare);
    pos = put(buf, pos, sellerPart);
    pos = writeU64(buf, pos, l.permitVersionNum[s], l.permitVersion[s], bare);
    pos = put(buf, pos, tail);
    const expiresNum = l.expiresAtSec[s];
    if (Math.abs(expiresNum) <= MAX_SAFE) pos = writeInt(buf, pos, expiresNum, bare);
    else pos = writeAscii(buf, pos, u64Json(l.expiresAt[s], bare));
    if (extra) pos = put(buf, pos, K_EXTRA);
    buf[pos++] = END;
  }
  out.pos = pos;
  f.uses += uses;
}
