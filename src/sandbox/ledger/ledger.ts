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

  /** A listing is live while active and not past its expires_at (unix seconds). */
  isListingLive(seq: number, nowMs: number): boolean {
    return this.listings.active[seq] === 1 && this.listings.expiresAt[seq] * 1000n > BigInt(nowMs);
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
