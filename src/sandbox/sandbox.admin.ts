import type { FaultRule } from './faults/model';
import { noFaults } from './faults/injector';
import { serializeListings } from './ledger/page.serializer';
import { MAX_SANDBOX_TIME_MS } from './sandbox.clock';
import type { SandboxCore } from './sandbox.core';
import { LedgerError } from './ledger/ledger';
import type {
  EventInput,
  LedgerTransactionView,
  ListingView,
  OwnerRef,
  SeedListingInput,
  TicketView,
  TransactionView,
} from './admin.types';
import type { WalletRef } from './chain/wallet.keys';

/**
 * The programmatic admin surface of a running sandbox (SandboxHandle.admin); /__sandbox/* routes call the
 * same methods. Every method settles due landings first so results reflect the current sandbox time.
 */
export class SandboxAdmin {
  constructor(private readonly core: SandboxCore) {}

  get apiKey(): string {
    return this.core.options.apiKey;
  }
  get readOnlyApiKey(): string {
    return this.core.options.readOnlyApiKey;
  }
  get adminKey(): string {
    return this.core.options.adminKey;
  }
  get feePayerAddress(): string {
    return this.core.keys.feePayer.publicKey.toBase58();
  }
  get stablecoinMint(): string {
    return this.core.keys.stablecoinMint;
  }
  get programId(): string {
    return this.core.keys.programId.toBase58();
  }

  walletAddress(ref: WalletRef): string {
    return this.core.keys.address(ref.kind, ref.subject);
  }
  userWalletAddress(subject: string): string {
    return this.core.keys.address('user', subject);
  }
  integratorWalletAddress(subject: string): string {
    return this.core.keys.address('integrator', subject);
  }

  private resolve(owner: OwnerRef): string {
    return 'address' in owner ? owner.address : this.walletAddress(owner);
  }

  now(): number {
    return this.core.settle();
  }

  /**
   * Moves sandbox time forward (landing, blockhash and listing expiry follow); returns the new time. Refuses
   * (LedgerError invalid, HTTP 400) a step that is not a non-negative safe integer or that would carry the
   * clock past MAX_SANDBOX_TIME_MS, where dates stop being representable; the clock is then unchanged.
   */
  advanceTime(ms: number): number {
    const now = this.core.settle();
    if (!Number.isSafeInteger(ms) || ms < 0 || now + ms > MAX_SANDBOX_TIME_MS) {
      throw new LedgerError(
        'invalid',
        `ms must be an integer from 0 to ${Math.max(0, MAX_SANDBOX_TIME_MS - now)} (the clock stops at ${new Date(MAX_SANDBOX_TIME_MS).toISOString()})`,
      );
    }
    this.core.clock.advance(ms);
    return this.core.settle();
  }

  createEvent(input: EventInput = {}): { eventId: bigint; startAtMs: number } {
    const now = this.core.settle();
    const ledger = this.core.ledger;
    let eventId = input.eventId;
    for (let candidate = 500_000n + BigInt(ledger.counts().events); eventId === undefined; candidate++) {
      if (ledger.events.findIndex(candidate) < 0) eventId = candidate;
    }
    const event = ledger.createEvent({
      eventId,
      name: input.name ?? `Admin event ${eventId}`,
      startAtMs: input.startAtMs ?? now + 7 * 86_400_000,
      venue: input.venue ?? 'Sandbox Hall',
      royalty: input.royaltyDestinations ?? [],
      ticketTypeConfig: input.ticketTypeConfig ?? null,
    });
    return { eventId: event.eventId, startAtMs: event.startAtMs };
  }

  mintTicket(input: { eventId: bigint; ticketId?: bigint; owner: OwnerRef }): TicketView {
    this.core.settle();
    const index = this.core.ledger.mintTicket(input.eventId, input.ticketId, this.resolve(input.owner));
    return this.ticketView(index);
  }

  /** Puts a listing straight on the ledger (no transaction), minting the ticket to the seller if needed. */
  seedListing(input: SeedListingInput): ListingView {
    const now = this.core.settle();
    const ledger = this.core.ledger;
    const seller = this.resolve(input.seller);
    let ticket = input.ticketId === undefined ? -1 : ledger.findTicket(input.eventId, input.ticketId);
    if (ticket < 0) ticket = ledger.mintTicket(input.eventId, input.ticketId, seller);
    if (ledger.ticketOwner(ticket) !== seller) {
      throw new LedgerError('conflict', 'the seller does not own that ticket');
    }
    if (ledger.liveListingOf(ticket, now) >= 0) throw new LedgerError('conflict', 'ticket already listed');
    const event = ledger.eventOfTicket(ticket);
    const intern = (a: string): number => ledger.addresses.intern(a);
    const seq = ledger.openListing(ticket, {
      askPriceMinor: input.askPriceMinor,
      sellerPayout: intern(this.core.keys.syntheticAddress('payout', seller)),
      integratorIdentity: intern(this.core.keys.syntheticAddress('integrator-identity')),
      integratorAuthority: intern(this.core.keys.address('integrator', 'sandbox-integrator')),
      buyerAllow: input.buyerAllow == null ? -1 : intern(input.buyerAllow),
      ticketTypeConfig: event.ticketTypeConfig,
      expiresAt: input.expiresAt ?? BigInt(Math.floor(event.startAtMs / 1000)),
    });
    return this.listingView(seq);
  }

  ticket(eventId: bigint, ticketId: bigint): TicketView | undefined {
    this.core.settle();
    const index = this.core.ledger.findTicket(eventId, ticketId);
    return index < 0 ? undefined : this.ticketView(index);
  }

  /** The ticket's live listing as the indexer would serve it, or undefined. */
  listing(eventId: bigint, ticketId: bigint): ListingView | undefined {
    const now = this.core.settle();
    const ledger = this.core.ledger;
    const index = ledger.findTicket(eventId, ticketId);
    const seq = index < 0 ? -1 : ledger.liveListingOf(index, now);
    return seq >= 0 ? this.listingView(seq) : undefined;
  }

  /**
   * Adds test money (minor units) to an owner's stablecoin balance; returns the new balance. A balance past
   * u64 throws LedgerError('balance_overflow') (HTTP 422) and changes nothing.
   */
  fund(owner: OwnerRef, amountMinor: bigint): bigint {
    this.core.settle();
    return this.core.ledger.credit(this.core.ledger.addresses.intern(this.resolve(owner)), amountMinor);
  }

  balance(owner: OwnerRef): bigint {
    this.core.settle();
    return this.core.ledger.balanceOf(this.core.ledger.addresses.intern(this.resolve(owner)));
  }

  setFaults(rules: readonly FaultRule[], seed?: string): void {
    this.core.faults.set(rules, seed);
  }
  addFault(rule: FaultRule): void {
    this.core.faults.add(rule);
  }
  clearFaults(): void {
    this.core.faults.clear();
  }
  faults(): FaultRule[] {
    return this.core.faults.list();
  }

  /** A transaction by custodial transaction id or by transaction signature. */
  transaction(id: string): TransactionView | undefined {
    const now = this.core.settle();
    const record = this.core.registry.get(id) ?? this.core.registry.findBySignature(id);
    if (record === undefined) return undefined;
    const state = this.core.registry.stateOf(record, now);
    return {
      custodialTransactionId: record.id,
      transactionSignature: record.transactionSignature,
      state,
      failureReason: record.failureReason ?? null,
    };
  }

  /**
   * Every signed transaction (optionally one instruction and/or one state), in signing order: the ledger's
   * own record, so a harness can count purchases per listing and per idempotency key independently of the
   * client that made them.
   */
  transactions(filter: { instruction?: string; state?: string } = {}): LedgerTransactionView[] {
    const now = this.core.settle();
    const views: LedgerTransactionView[] = [];
    for (const record of this.core.registry.all()) {
      if (filter.instruction !== undefined && record.instruction !== filter.instruction) continue;
      const state = this.core.registry.stateOf(record, now);
      if (filter.state !== undefined && state !== filter.state) continue;
      views.push({
        custodialTransactionId: record.id,
        transactionSignature: record.transactionSignature,
        state,
        failureReason: record.failureReason ?? null,
        instruction: record.instruction,
        walletKind: record.kind,
        subject: record.subject,
        idempotencyKey: record.idempotencyKey,
        items: record.pairs.map((p) => ({
          event_id: p.eventId.toString(),
          ticket_id: p.ticketId.toString(),
        })),
        signedAtMs: record.signedAtMs,
        submittedAtMs: record.submittedAtMs ?? null,
        // A landed record's last update is its landing (settle() stamps the due time, not the time of asking).
        landedAtMs: state === 'confirmed' || state === 'landed_with_error' ? record.updatedAtMs : null,
      });
    }
    return views;
  }

  /** Regenerates the dataset from the seed; transactions, idempotency keys and cursors are forgotten. */
  reset(): void {
    this.core.reset();
  }

  stats(): {
    nowMs: number;
    events: number;
    tickets: number;
    listings: number;
    activeListings: number;
    transactions: number;
  } {
    const now = this.core.settle();
    return { nowMs: now, ...this.core.ledger.counts(), transactions: this.core.registry.size };
  }

  private ticketView(index: number): TicketView {
    const ticket = this.core.ledger.ticketSummary(index);
    return {
      event_id: ticket.eventId.toString(),
      ticket_id: ticket.ticketId.toString(),
      owner: ticket.owner,
      listed_permit_version: ticket.listedPermitVersion?.toString() ?? null,
    };
  }

  private listingView(seq: number): ListingView {
    return JSON.parse(
      serializeListings(this.core.ledger, [seq], noFaults(), this.core.faults.random()),
    ) as ListingView;
  }
}
