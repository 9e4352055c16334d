/** Instruction batches after validation: u64/i64 as bigint, addresses as canonical base58, null kept as null. */

export type InstructionName = 'accept_offer_v2' | 'cancel_listing_v1' | 'list_ticket_v2';

export const INSTRUCTION_NAMES: readonly InstructionName[] = [
  'accept_offer_v2',
  'cancel_listing_v1',
  'list_ticket_v2',
];

export interface AcceptOfferParams {
  eventId: bigint;
  ticketId: bigint;
  permitVersion: bigint;
  buyer: string;
  integratorAuthority: string;
  sellerPayout: string;
  royaltyDestinations: string[];
  ticketTypeConfig: string | null;
  integratorIdentity: string;
  stablecoinMint: string;
}

export interface CancelListingParams {
  eventId: bigint;
  ticketId: bigint;
  canceller: string;
}

export interface ListTicketParams {
  seller: string;
  storageFeePayer: string;
  listingIntegratorIdentity: string;
  listingIntegratorAuthority: string;
  stablecoinMint: string;
  eventId: bigint;
  ticketId: bigint;
  askPriceMinor: bigint;
  buyerAllow: string | null;
  payoutAta: string;
  expiresAt: bigint;
  ticketTypeConfig: string | null;
}

export type InstructionBatch =
  | { instruction: 'accept_offer_v2'; params: AcceptOfferParams[] }
  | { instruction: 'cancel_listing_v1'; params: CancelListingParams[] }
  | { instruction: 'list_ticket_v2'; params: ListTicketParams[] };

/** One decoded instruction of a transaction, with the custodial signer that authorised it. */
export type LedgerInstruction =
  | { instruction: 'accept_offer_v2'; signer: string; params: AcceptOfferParams }
  | { instruction: 'cancel_listing_v1'; signer: string; params: CancelListingParams }
  | { instruction: 'list_ticket_v2'; signer: string; params: ListTicketParams };

/** A JSON-friendly, order-stable rendering of a batch; equal batches give equal fingerprints. */
export function batchFingerprint(batch: InstructionBatch): string {
  return JSON.stringify(batch, (_key, value: unknown) =>
    typeof value === 'bigint' ? value.toString() : value,
  );
}

/**
 * The address a custodial signer must hold in each param: the sandbox refuses up front (403) to sign for a
 * wallet that is not the subject's own. For integrators it is the integrator authority of the instruction.
 */
export function authorityOf(batch: InstructionBatch, kind: 'user' | 'integrator'): string[] {
  switch (batch.instruction) {
    case 'accept_offer_v2':
      return batch.params.map((p) => (kind === 'user' ? p.buyer : p.integratorAuthority));
    case 'list_ticket_v2':
      return batch.params.map((p) => (kind === 'user' ? p.seller : p.listingIntegratorAuthority));
    case 'cancel_listing_v1':
      return batch.params.map((p) => p.canceller);
    default:
      return unreachable(batch);
  }
}

/** Compile-time exhaustiveness guard for switches over the instruction union. */
export function unreachable(value: never): never {
  throw new Error(`unexpected value ${JSON.stringify(value)}`);
}
