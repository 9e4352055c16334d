import { growColumn, safeNumberOr, SortedUint32List } from './typed-columns';

/** Everything needed to create a listing; addresses are address-book indices, -1 meaning null. */
export interface NewListing {
  eventIdx: number;
  ticketIdx: number;
  askPriceMinor: bigint;
  seller: number;
  sellerPayout: number;
  integratorIdentity: number;
  integratorAuthority: number;
  buyerAllow: number;
  ticketTypeConfig: number;
  expiresAt: bigint;
  permitVersion: bigint;
}

/**
 * Listings in insertion order, one typed array per field. The array index is the listing's sequence number:
 * it never changes and never gets reused, which is what lets cursors stay correct while inventory churns.
 */
export class ListingStore {
  eventIdx = new Uint32Array(1024);
  ticketIdx = new Uint32Array(1024);
  askPriceMinor = new BigUint64Array(1024);
  seller = new Uint32Array(1024);
  sellerPayout = new Uint32Array(1024);
  integratorIdentity = new Uint32Array(1024);
  integratorAuthority = new Uint32Array(1024);
  buyerAllow = new Int32Array(1024);
  ticketTypeConfig = new Int32Array(1024);
  expiresAt = new BigInt64Array(1024);
  /**
   * expires_at as a number, for the liveness scan of every page (a BigInt64Array read allocates a bigint).
   * Rounding past 2^53 cannot change a comparison with the current time in seconds, which is far below.
   */
  expiresAtSec = new Float64Array(1024);
  permitVersion = new BigUint64Array(1024);
  /** askPriceMinor / permitVersion as numbers when at most 2^53-1, else -1 (read the bigint column). */
  askPriceNum = new Float64Array(1024);
  permitVersionNum = new Float64Array(1024);
  active = new Uint8Array(1024);
  size = 0;
  activeCount = 0;
  private readonly perEvent = new Map<number, SortedUint32List>();

  reserve(capacity: number): void {
    if (capacity <= this.eventIdx.length) return;
    this.eventIdx = growColumn(this.eventIdx, capacity);
    this.ticketIdx = growColumn(this.ticketIdx, capacity);
    this.askPriceMinor = growColumn(this.askPriceMinor, capacity);
    this.seller = growColumn(this.seller, capacity);
    this.sellerPayout = growColumn(this.sellerPayout, capacity);
    this.integratorIdentity = growColumn(this.integratorIdentity, capacity);
    this.integratorAuthority = growColumn(this.integratorAuthority, capacity);
    this.buyerAllow = growColumn(this.buyerAllow, capacity);
    this.ticketTypeConfig = growColumn(this.ticketTypeConfig, capacity);
    this.expiresAt = growColumn(this.expiresAt, capacity);
    this.expiresAtSec = growColumn(this.expiresAtSec, capacity);
    this.permitVersion = growColumn(this.permitVersion, capacity);
    this.askPriceNum = growColumn(this.askPriceNum, capacity);
    this.permitVersionNum = growColumn(this.permitVersionNum, capacity);
    this.active = growColumn(this.active, capacity);
  }

  append(listing: NewListing): number {
    if (this.size === this.eventIdx.length) this.reserve(this.size * 2);
    const seq = this.size++;
    this.eventIdx[seq] = listing.eventIdx;
    this.ticketIdx[seq] = listing.ticketIdx;
    this.askPriceMinor[seq] = listing.askPriceMinor;
    this.seller[seq] = listing.seller;
    this.sellerPayout[seq] = listing.sellerPayout;
    this.integratorIdentity[seq] = listing.integratorIdentity;
    this.integratorAuthority[seq] = listing.integratorAuthority;
    this.buyerAllow[seq] = listing.buyerAllow;
    this.ticketTypeConfig[seq] = listing.ticketTypeConfig;
    this.expiresAt[seq] = listing.expiresAt;
    this.expiresAtSec[seq] = Number(listing.expiresAt);
    this.permitVersion[seq] = listing.permitVersion;
    this.askPriceNum[seq] = safeNumberOr(listing.askPriceMinor, -1);
    this.permitVersionNum[seq] = safeNumberOr(listing.permitVersion, -1);
    this.active[seq] = 1;
    this.activeCount++;
    let list = this.perEvent.get(listing.eventIdx);
    if (list === undefined) {
      list = new SortedUint32List();
      this.perEvent.set(listing.eventIdx, list);
    }
    list.push(seq);
    return seq;
  }

  deactivate(seq: number): void {
    if (this.active[seq] === 1) {
      this.active[seq] = 0;
      this.activeCount--;
    }
  }

  /** Sequences of one event's listings (active or not), ascending; undefined if it never had any. */
  ofEvent(eventIdx: number): SortedUint32List | undefined {
    return this.perEvent.get(eventIdx);
  }
}
