import type { TransactionState } from './chain/transaction.registry';
import type { WalletRef } from './chain/wallet.keys';

/** Inputs and views of the sandbox admin surface (SandboxAdmin and the /__sandbox routes). */

/** An owner: a custodial wallet by subject, or any address. */
export type OwnerRef = WalletRef | { address: string };

export interface EventInput {
  eventId?: bigint;
  name?: string;
  startAtMs?: number;
  venue?: string;
  royaltyDestinations?: readonly string[];
  ticketTypeConfig?: string | null;
}

export interface TicketView {
  event_id: string;
  ticket_id: string;
  owner: string;
  /** Permit version of the ticket's active listing, or null when it is not listed. */
  listed_permit_version: string | null;
}

export interface SeedListingInput {
  eventId: bigint;
  ticketId?: bigint;
  seller: OwnerRef;
  askPriceMinor: bigint;
  /** Unix seconds; default: the event's start. */
  expiresAt?: bigint;
  buyerAllow?: string | null;
}

/** Listing fields as the indexer serves them (all u64 as decimal strings). */
export type ListingView = Record<string, unknown> & {
  event_id: string;
  ticket_id: string;
  permit_version: string;
};

export interface TransactionView {
  custodialTransactionId: string;
  transactionSignature: string;
  state: TransactionState;
  failureReason: string | null;
}

/** One signed transaction in the ledger listing (`GET /__sandbox/transactions`): what auditors count. */
export interface LedgerTransactionView extends TransactionView {
  instruction: string;
  walletKind: string;
  subject: string;
  idempotencyKey: string;
  items: { event_id: string; ticket_id: string }[];
  signedAtMs: number;
  submittedAtMs: number | null;
  /**
   * Sandbox time at which a `confirmed` or `landed_with_error` transaction landed (a confirmed purchase's
   * listing is gone from the indexer from then on); null while signed, processing, or once expired.
   */
  landedAtMs: number | null;
}
