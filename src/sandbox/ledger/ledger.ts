import { AddressBook } from './address.book';
import { EventStore, type EventRecord } from './event.store';
import { ListingStore, type NewListing } from './listing.store';
import { TicketStore } from './ticket.store';
import { U64_MAX } from '../../common/int64';
import type { WalletKeys } from '../chain/wallet.keys';

/** Admin-surface failure with an HTTP-friendly kind; ledger rule failures at landing are strings instead. */
export class LedgerError extends Error {
  constructor(
    /** not_found → 404, conflict → 409, invalid → 400, balance_overflow → 422. */
    readonly kind: 'not_found' | 'conflict' | 'invalid' | 'balance_overflow',
    message: string,
  ) {
    super(message);
    this.name = 'LedgerError';
  }
}

export interface NewEventInput {
  eventId: bigint;
  name: string;
  startAtMs: number;
  venue: string;
  royalty: readonly string[];
  ticketTypeConfig: string | null;
}

/**
 * The sandbox's ledger state: events, tickets and their owners, listings, stablecoin balances. Mutated only
 * by landing transactions (ledger.rules.ts), the generator and the admin surface.
 */
export class SandboxLedger {
  readonly addresses = new AddressBook();
  readonly events = new EventStore();
  readonly tickets = new TicketStore();
  readonly listings = new ListingStore();
  readonly stablecoinMint: number;
  private readonly balances = new Map<number, bigint>();

  constructor(
    readonly keys: WalletKeys,
    private readonly initialBalanceMinor: bigint,
  ) {
    this.stablecoinMint = this.addresses.intern(keys.stablecoinMint);
  }

  /** Every wallet starts with the configured test-money balance until something moves it. */
  balanceOf(address: number): bigint {
    return this.balances.get(address) ?? this.initialBalanceMinor;
  }

  setBalance(address: number, amountMinor: bigint): void {
    if (amountMinor < 0n || amountMinor > U64_MAX) throw new RangeError('a balance is a u64');
    this.balances.set(address, amountMinor);
  }

  /** Adds test money; a balance past u64 is refused (LedgerError balance_overflow), nothing changes. */
  credit(address: number, amountMinor: bigint): bigint {
    const balance = this.balanceOf(address) + amountMinor;
    if (balance > U64_MAX) {
      throw new LedgerError('balance_overflow', `the balance would exceed the u64 maximum ${U64_MAX}`);
    }
    this.setBalance(address, balance);
    return balance;
  }

  createEvent(input: NewEventInput): EventRecord {
    if (this.events.findIndex(input.eventId) >= 0) {
      throw new LedgerError('conflict', `event ${input.eventId} already exists`);
    }
    return this.events.add({
      eventId: input.eventId,
      name: input.name,
      startAtMs: input.startAtMs,
      venue: input.venue,
      royalty: input.royalty.map((a) => this.addresses.intern(a)),
      ticketTypeConfig: input.ticketTypeConfig === null ? -1 : this.addresses.intern(input.ticketTypeConfig),
    });
  }

  eventIndexOrThrow(eventId: bigint): number {
    const index = this.events.findIndex(eventId);
    if (index < 0) throw new LedgerError('not_found', `event ${eventId} does not exist`);
    return index;
  }

  /** Mints a ticket to an owner address; a fresh ticket id is chosen when none is given. */
  mintTicket(eventId: bigint, ticketId: bigint | undefined, owner: string): number {
    const eventIdx = this.eventIndexOrThrow(eventId);
    const id = ticketId ?? this.tickets.freshId(eventIdx);
    // The id column is a BigUint64Array, which would silently wrap 2^64 to 0.
    if (id > U64_MAX)
      throw new LedgerError('conflict', `no ticket id left after ${U64_MAX} in event ${eventId}`);
    if (this.tickets.find(eventIdx, id) >= 0) {
      throw new LedgerError('conflict', `ticket ${id} of event ${eventId} already exists`);
    }
    return this.tickets.add(eventIdx, id, this.addresses.intern(owner));
  }

  /** Ticket store index of (event_id, ticket_id), or -1. */
  findTicket(eventId: bigint, ticketId: bigint): number {
    const eventIdx = this.events.findIndex(eventId);
    return eventIdx < 0 ? -1 : this.tickets.find(eventIdx, ticketId);
  }

  /**
   * THE "listing is live" rule, the only copy: active and not past its expires_at (unix seconds). Reads the
   * expiry's number column, so a page scan allocates no bigint (exact wherever it matters; see ListingStore).
   */
  private liveAt(seq: number, nowSec: number): boolean {
    return this.listings.active[seq] === 1 && this.listings.expiresAtSec[seq] > nowSec;
  }

  isListingLive(seq: number, nowMs: number): boolean {
    return this.liveAt(seq, Math.floor(nowMs / 1000));
  }

  /**
   * One page of live listings in insertion order from sequence `from` (all events, or one event id):
   * the sequences served and the sequence of the next live listing (null when none is left).
   */
  liveListings(
    from: number,
    limit: number,
    nowMs: number,
    eventId?: bigint,
  ): { seqs: number[]; next: number | null } {
    const nowSec = Math.floor(nowMs / 1000);
    const l = this.listings;
    const seqs: number[] = [];
    if (eventId === undefined) {
      let seq = from;
      for (; seq < l.size && seqs.length < limit; seq++) if (this.liveAt(seq, nowSec)) seqs.push(seq);
      while (seq < l.size && !this.liveAt(seq, nowSec)) seq++;
      return { seqs, next: seq < l.size ? seq : null };
    }
    const eventIdx = this.events.findIndex(eventId);
    const list = eventIdx < 0 ? undefined : l.ofEvent(eventIdx);
    if (list === undefined) return { seqs, next: null };
    let i = list.firstAfter(from - 1);
    for (; i < list.length && seqs.length < limit; i++) {
      if (this.liveAt(list.at(i), nowSec)) seqs.push(list.at(i));
    }
    while (i < list.length && !this.liveAt(list.at(i), nowSec)) i++;
    return { seqs, next: i < list.length ? list.at(i) : null };
  }

  /** One page of upcoming events (start after now) in creation order from store index `from`. */
  upcomingEvents(from: number, limit: number, nowMs: number): { indices: number[]; next: number | null } {
    const upcoming = (i: number): boolean => this.events.get(i).startAtMs > nowMs;
    const indices: number[] = [];
    let i = from;
    for (; i < this.events.size && indices.length < limit; i++) if (upcoming(i)) indices.push(i);
    while (i < this.events.size && !upcoming(i)) i++;
    return { indices, next: i < this.events.size ? i : null };
  }

  /** The ticket's live listing sequence, or -1. */
  liveListingOf(ticketIdx: number, nowMs: number): number {
    const seq = this.tickets.listing[ticketIdx];
    return seq >= 0 && this.isListingLive(seq, nowMs) ? seq : -1;
  }

  ticketOwner(ticketIdx: number): string {
    return this.addresses.get(this.tickets.owner[ticketIdx]);
  }

  eventOfTicket(ticketIdx: number): EventRecord {
    return this.events.get(this.tickets.eventIdx[ticketIdx]);
  }

  /** What the admin surface shows of a ticket; the permit version only while its listing is active. */
  ticketSummary(ticketIdx: number): {
    eventId: bigint;
    ticketId: bigint;
    owner: string;
    listedPermitVersion: bigint | null;
  } {
    const seq = this.tickets.listing[ticketIdx];
    return {
      eventId: this.eventOfTicket(ticketIdx).eventId,
      ticketId: this.tickets.ticketId[ticketIdx],
      owner: this.ticketOwner(ticketIdx),
      listedPermitVersion:
        seq >= 0 && this.listings.active[seq] === 1 ? this.listings.permitVersion[seq] : null,
    };
  }

  counts(): { events: number; tickets: number; listings: number; activeListings: number } {
    return {
      events: this.events.size,
      tickets: this.tickets.size,
      listings: this.listings.size,
      activeListings: this.listings.activeCount,
    };
  }

  /** Creates an active listing for a ticket its seller owns; used by landing and by the admin seed. */
  openListing(
    ticketIdx: number,
    // The ticket decides event, seller and permit version; the caller gives the rest.
    fields: Omit<NewListing, 'eventIdx' | 'ticketIdx' | 'seller' | 'permitVersion'>,
  ): number {
    const permitVersion = ++this.tickets.permitCounter[ticketIdx];
    const seq = this.listings.append({
      ...fields,
      eventIdx: this.tickets.eventIdx[ticketIdx],
      ticketIdx,
      seller: this.tickets.owner[ticketIdx],
      permitVersion: BigInt(permitVersion),
    });
    this.tickets.listing[ticketIdx] = seq;
    return seq;
  }

  closeListing(seq: number): void {
    this.listings.deactivate(seq);
    const ticketIdx = this.listings.ticketIdx[seq];
    if (this.tickets.listing[ticketIdx] === seq) this.tickets.listing[ticketIdx] = -1;
  }
}
