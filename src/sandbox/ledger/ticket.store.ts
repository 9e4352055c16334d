import { growColumn, safeNumberOr } from './typed-columns';

/**
 * Ticket ownership, columnar. Generated tickets of an event have contiguous ids from a base, so finding them
 * needs one small index per event instead of a million map entries; minted tickets go in a map.
 */
export class TicketStore {
  eventIdx = new Uint32Array(1024);
  ticketId = new BigUint64Array(1024);
  /** ticketId as a number when at most 2^53-1, else -1 (read the bigint column). */
  ticketIdNum = new Float64Array(1024);
  owner = new Uint32Array(1024);
  /** How many times the ticket was listed: the permit version of its current listing. */
  permitCounter = new Uint32Array(1024);
  /** Sequence of the ticket's active listing, or -1. */
  listing = new Int32Array(1024).fill(-1);
  size = 0;

  private readonly generated = new Map<number, { base: bigint; indices: Uint32Array }>();
  private readonly minted = new Map<string, number>();
  private readonly nextId = new Map<number, bigint>();

  reserve(capacity: number): void {
    if (capacity <= this.eventIdx.length) return;
    this.eventIdx = growColumn(this.eventIdx, capacity);
    this.ticketId = growColumn(this.ticketId, capacity);
    this.ticketIdNum = growColumn(this.ticketIdNum, capacity);
    this.owner = growColumn(this.owner, capacity);
    this.permitCounter = growColumn(this.permitCounter, capacity);
    const listing = new Int32Array(capacity).fill(-1);
    listing.set(this.listing);
    this.listing = listing;
  }

  /** Registers the contiguous id range base..base+indices.length-1 produced by the generator. */
  registerGenerated(eventIdx: number, base: bigint, indices: Uint32Array): void {
    this.generated.set(eventIdx, { base, indices });
    this.bumpNextId(eventIdx, base + BigInt(indices.length));
  }

  /** Appends a ticket; the caller guarantees (event, id) is new (see find). */
  add(eventIdx: number, ticketId: bigint, owner: number, track = true): number {
    if (this.size === this.eventIdx.length) this.reserve(this.size * 2);
    const index = this.size++;
    this.eventIdx[index] = eventIdx;
    this.ticketId[index] = ticketId;
    this.ticketIdNum[index] = safeNumberOr(ticketId, -1);
    this.owner[index] = owner;
    this.permitCounter[index] = 0;
    this.listing[index] = -1;
    if (track) {
      this.minted.set(`${eventIdx}:${ticketId}`, index);
      this.bumpNextId(eventIdx, ticketId + 1n);
    }
    return index;
  }

  find(eventIdx: number, ticketId: bigint): number {
    const range = this.generated.get(eventIdx);
    if (
      range !== undefined &&
      ticketId >= range.base &&
      ticketId - range.base < BigInt(range.indices.length)
    ) {
      return range.indices[Number(ticketId - range.base)];
    }
    return this.minted.get(`${eventIdx}:${ticketId}`) ?? -1;
  }

  /** A ticket id not yet used in the event, for mints that do not name one. */
  freshId(eventIdx: number): bigint {
    return this.nextId.get(eventIdx) ?? 1n;
  }

  private bumpNextId(eventIdx: number, candidate: bigint): void {
    if (candidate > (this.nextId.get(eventIdx) ?? 1n)) this.nextId.set(eventIdx, candidate);
  }
}
