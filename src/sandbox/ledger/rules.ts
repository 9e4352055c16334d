import type {
  AcceptOfferParams,
  CancelListingParams,
  LedgerInstruction,
  ListTicketParams,
} from '../chain/instruction.model';
import { U64_MAX } from '../../common/int64';
import type { SandboxLedger } from './ledger';

type Effect = () => void;
type Check = { effect: Effect } | { failure: string };
interface Flows {
  spending: Map<number, bigint>;
  receiving: Map<number, bigint>;
}

/**
 * Executes a landed transaction against the ledger, all or nothing like a real program: every instruction
 * is checked against the current state first and effects are applied only if all pass. Returns the failure
 * reason (the submission's `failureReason`) or undefined when the transaction confirmed.
 */
export function applyInstructions(
  ledger: SandboxLedger,
  instructions: readonly LedgerInstruction[],
  nowMs: number,
): string | undefined {
  const effects: Effect[] = [];
  // Money moved by earlier instructions of this transaction, per address: checks see the whole batch.
  const flows: Flows = { spending: new Map(), receiving: new Map() };
  for (const [i, ix] of instructions.entries()) {
    let check: Check;
    switch (ix.instruction) {
      case 'accept_offer_v2':
        check = checkAccept(ledger, ix.params, nowMs, flows);
        break;
      case 'list_ticket_v2':
        check = checkList(ledger, ix.params, nowMs);
        break;
      case 'cancel_listing_v1':
        check = checkCancel(ledger, ix.params);
        break;
    }
    if ('failure' in check) return `instruction ${i} (${ix.instruction}): ${check.failure}`;
    effects.push(check.effect);
  }
  for (const effect of effects) effect();
  return undefined;
}

function sameAddress(ledger: SandboxLedger, index: number, address: string | null): boolean {
  return address === null ? index < 0 : index >= 0 && ledger.addresses.get(index) === address;
}

function findTicket(ledger: SandboxLedger, eventId: bigint, ticketId: bigint): number | string {
  if (ledger.events.findIndex(eventId) < 0) return `event ${eventId} does not exist`;
  const ticket = ledger.findTicket(eventId, ticketId);
  return ticket < 0 ? `ticket ${ticketId} of event ${eventId} does not exist` : ticket;
}

function checkAccept(
  ledger: SandboxLedger,
  p: AcceptOfferParams,
  nowMs: number,
  { spending, receiving }: Flows,
): Check {
  const ticket = findTicket(ledger, p.eventId, p.ticketId);
  if (typeof ticket === 'string') return { failure: ticket };
  const seq = ledger.tickets.listing[ticket];
  const l = ledger.listings;
  if (seq < 0 || l.active[seq] !== 1) return { failure: 'listing not found (sold or cancelled)' };
  if (!ledger.isListingLive(seq, nowMs)) return { failure: 'listing expired' };
  if (l.permitVersion[seq] !== p.permitVersion) {
    return { failure: `permit_version mismatch (listing is at ${l.permitVersion[seq]})` };
  }
  if (!sameAddress(ledger, l.sellerPayout[seq], p.sellerPayout))
    return { failure: 'seller_payout does not match the listing' };
  const royalty = ledger.events.get(l.eventIdx[seq]).royalty;
  const royaltyOk =
    royalty.length === p.royaltyDestinations.length &&
    royalty.every((r, i) => sameAddress(ledger, r, p.royaltyDestinations[i]));
  if (!royaltyOk) return { failure: 'royalty_destinations do not match the event' };
  if (!sameAddress(ledger, ledger.stablecoinMint, p.stablecoinMint))
    return { failure: 'unsupported stablecoin_mint' };
  if (!sameAddress(ledger, l.ticketTypeConfig[seq], p.ticketTypeConfig)) {
    return { failure: 'ticket_type_config does not match the listing' };
  }
  const buyer = ledger.addresses.intern(p.buyer);
  if (l.buyerAllow[seq] >= 0 && l.buyerAllow[seq] !== buyer)
    return { failure: 'buyer is not allowed by the listing' };
  if (ledger.tickets.owner[ticket] !== l.seller[seq]) return { failure: 'seller no longer owns the ticket' };
  if (buyer === l.seller[seq]) return { failure: 'buyer is the seller' };
  const price = l.askPriceMinor[seq];
  const spent = (spending.get(buyer) ?? 0n) + price;
  if (ledger.balanceOf(buyer) < spent) return { failure: 'insufficient stablecoin balance' };
  const payout = l.sellerPayout[seq];
  const received = (receiving.get(payout) ?? 0n) + price;
  // Balances are u64 on the ledger: a credit that would wrap fails the landing instead.
  if (ledger.balanceOf(payout) + received > U64_MAX) {
    return { failure: 'seller_payout balance would exceed u64' };
  }
  spending.set(buyer, spent);
  receiving.set(payout, received);
  return {
    effect: () => {
      ledger.setBalance(buyer, ledger.balanceOf(buyer) - price);
      ledger.setBalance(payout, ledger.balanceOf(payout) + price);
      ledger.tickets.owner[ticket] = buyer;
      ledger.closeListing(seq);
    },
  };
}

function checkList(ledger: SandboxLedger, p: ListTicketParams, nowMs: number): Check {
  const ticket = findTicket(ledger, p.eventId, p.ticketId);
  if (typeof ticket === 'string') return { failure: ticket };
  if (!sameAddress(ledger, ledger.tickets.owner[ticket], p.seller))
    return { failure: 'seller does not own the ticket' };
  const current = ledger.tickets.listing[ticket];
  if (current >= 0 && ledger.isListingLive(current, nowMs)) return { failure: 'ticket is already listed' };
  if (p.expiresAt * 1000n <= BigInt(nowMs)) return { failure: 'expires_at is not in the future' };
  if (p.askPriceMinor === 0n) return { failure: 'ask_price_minor must be positive' };
  if (!sameAddress(ledger, ledger.stablecoinMint, p.stablecoinMint))
    return { failure: 'unsupported stablecoin_mint' };
  const event = ledger.events.get(ledger.tickets.eventIdx[ticket]);
  if (!sameAddress(ledger, event.ticketTypeConfig, p.ticketTypeConfig)) {
    return { failure: 'ticket_type_config does not match the event' };
  }
  return {
    effect: () => {
      if (current >= 0) ledger.closeListing(current);
      const intern = (a: string | null): number => (a === null ? -1 : ledger.addresses.intern(a));
      ledger.openListing(ticket, {
        askPriceMinor: p.askPriceMinor,
        sellerPayout: intern(p.payoutAta),
        integratorIdentity: intern(p.listingIntegratorIdentity),
        integratorAuthority: intern(p.listingIntegratorAuthority),
        buyerAllow: intern(p.buyerAllow),
        ticketTypeConfig: intern(p.ticketTypeConfig),
        expiresAt: p.expiresAt,
      });
    },
  };
}

function checkCancel(ledger: SandboxLedger, p: CancelListingParams): Check {
  const ticket = findTicket(ledger, p.eventId, p.ticketId);
  if (typeof ticket === 'string') return { failure: ticket };
  const seq = ledger.tickets.listing[ticket];
  if (seq < 0 || ledger.listings.active[seq] !== 1)
    return { failure: 'listing not found (sold or cancelled)' };
  const l = ledger.listings;
  const allowed =
    sameAddress(ledger, l.seller[seq], p.canceller) ||
    sameAddress(ledger, l.integratorAuthority[seq], p.canceller);
  if (!allowed) return { failure: 'canceller is neither the seller nor the listing integrator authority' };
  return { effect: () => ledger.closeListing(seq) };
}
