/**
 * Typed shapes of the upstream API v0.3.0 (contract part 2), as the rest of the service sees them:
 * 64-bit values are bigint, identifiers that may be null are `bigint | null`, request field names are kept
 * as the contract gives them. Checked against openapi/upstream-api-v0.3.0.openapi.json by the contract
 * tests (test/contract/upstream-client.openapi.contract-spec.ts).
 */

/** Contract 2.2, accept_offer_v2 params. */
export interface AcceptOfferV2Params {
  event_id: bigint;
  ticket_id: bigint;
  permit_version: bigint;
  buyer: string;
  integrator_authority: string;
  seller_payout: string;
  royalty_destinations: readonly string[];
  /** Omitted when undefined; an explicit null is sent as null. */
  ticket_type_config?: string | null;
  integrator_identity: string;
  stablecoin_mint: string;
}

/** Contract 2.2, cancel_listing_v1 params. */
export interface CancelListingV1Params {
  event_id: bigint;
  ticket_id: bigint;
  canceller: string;
}

/** Contract 2.2, list_ticket_v2 params. */
export interface ListTicketV2Params {
  seller: string;
  storage_fee_payer: string;
  listing_integrator_identity: string;
  listing_integrator_authority: string;
  stablecoin_mint: string;
  event_id: bigint;
  ticket_id: bigint;
  /** Exact amount in minor units of the payment token. */
  ask_price_minor: bigint;
  buyer_allow?: string | null;
  payout_ata: string;
  /** i64; unit not shown by the contract. */
  expires_at: bigint;
  ticket_type_config?: string | null;
}

/** Contract 2.2: exactly one instruction per batch, at least one params element. */
export type InstructionBatch =
  | { instruction: 'accept_offer_v2'; params: readonly AcceptOfferV2Params[] }
  | { instruction: 'cancel_listing_v1'; params: readonly CancelListingV1Params[] }
  | { instruction: 'list_ticket_v2'; params: readonly ListTicketV2Params[] };

export type InstructionName = InstructionBatch['instruction'];

/** Contract 2.3: response of both signing operations; exactly these fields. */
export interface SignedTransaction {
  /** 64 hexadecimal characters. */
  custodialTransactionId: string;
  signerAddress: string;
  feePayerAddress: string;
  /** Base64 serialized transaction. Never logged. */
  signedTransaction: string;
  message: string;
  signature: string;
  feePayerSignature: string;
  requiredSigners: string[];
  recentBlockhash: string;
}

export const SUBMISSION_STATUSES = ['processing', 'confirmed', 'landed_with_error', 'expired'] as const;
export type SubmissionStatus = (typeof SUBMISSION_STATUSES)[number];

/** Contract 2.4. A 200 is not confirmation: inspect `status` (null is a possible value). */
export interface SubmissionResult {
  custodialTransactionId: string;
  transactionSignature: string;
  status: SubmissionStatus | null;
  failureReason?: string;
}

/** Contract 2.5. */
export interface SubmitTransactionInput {
  signedTransaction: string;
  /** Default: empty array. */
  additionalSignatures?: readonly { address: string; signature: string }[];
}

/** Contract 2.6. `nextCursor` is opaque: pass it back byte-exact. */
export interface Page<T> {
  items: T[];
  nextCursor: string | null;
}

/** Contract 2.7 event item: known fields typed, the whole item as received in `raw`. */
export interface UpcomingEvent {
  /** Null when the upstream sent null or omitted it (indexed identifiers can be null). */
  eventId: bigint | null;
  name: string;
  /** As received (format not shown by the contract). */
  startAt: string;
  /** The item exactly as parsed (unknown fields included; unsafe integers as UnsafeJsonInteger). */
  raw: Record<string, unknown>;
}

/** Contract 2.7 listing item. */
export interface ActiveListing {
  eventId: bigint | null;
  /** Not shown by the contract; null when absent or null. */
  ticketId: bigint | null;
  /** Exact amount in minor units of the payment token (required). */
  askPriceMinor: bigint;
  raw: Record<string, unknown>;
}

/** Protocol config (fields beyond stablecoin_decimals not shown by the contract). */
export interface ProtocolConfig {
  /** Integer 0..18: decimals of the payment token, for formatting `ask_price_minor`. */
  stablecoinDecimals: number;
  /** When present as a string. */
  stablecoinMint: string | null;
  raw: Record<string, unknown>;
}

/** Purchase-status lookup (contract 4.6; record fields not shown). */
export interface PurchaseStatus {
  /** `status` when present as a string, else null. Values are not shown by the contract. */
  status: string | null;
  raw: Record<string, unknown>;
}

/** Per-call options every method accepts. */
export interface UpstreamCallOptions {
  /** Forwarded as `x-request-id` (a safe token of up to 128 characters; otherwise a new id is used). */
  requestId?: string;
  /** Cancels the call (reported as TIMEOUT: the outcome of a write is then unknown). */
  signal?: AbortSignal;
  /**
   * A `performance.now()` time of this process after which no attempt of this call starts (the caller's lease
   * may have been taken over by then: durable-work's `leaseDeadline`). Checked before every attempt, the first
   * included, and again when the attempt leaves the queue; a retry whose start would be past it is not made.
   * An attempt refused by it is TIMEOUT "not sent" (never a rejection): the next holder goes on with the same
   * idempotency key or the same bytes.
   */
  notAfter?: number;
}

export interface ListUpcomingEventsInput extends UpstreamCallOptions {
  limit?: number;
  cursor?: string;
}

export interface ListActiveListingsInput extends UpstreamCallOptions {
  limit?: number;
  cursor?: string;
  /** The `eventId` filter; omitted = all events. */
  eventId?: bigint;
}

/** Progress reported after each page of a walk. */
export interface WalkProgress {
  /** 1-based number of the page just received. */
  page: number;
  itemsOnPage: number;
  /** Items received so far, this page included. */
  itemsSoFar: number;
  /** Cursor for the next page, or null when this was the last one. */
  nextCursor: string | null;
}

export interface WalkOptions extends UpstreamCallOptions {
  /** Page size (default UPSTREAM_PAGE_LIMIT). */
  limit?: number;
  /** Upper bound on pages (default 100000): a safety net against an upstream that never ends. */
  maxPages?: number;
}

export interface WalkListingsOptions extends WalkOptions {
  eventId?: bigint;
}

/** One page of a walk as the iterator yields it: the items plus the walk's progress. */
export interface WalkPage<T> extends WalkProgress {
  items: T[];
}

/** Result of verifyKey(): never throws for upstream answers. */
export type KeyVerdict =
  | { ok: true; environment: string; checkedAt: number }
  | {
      ok: false;
      environment: string;
      checkedAt: number;
      code: import('./upstream.error').UpstreamErrorCode;
      status?: number;
      /** Operator-facing, safe (no key). */
      reason: string;
    };

/**
 * A 429 this replica got from the upstream, as its limiter tells listeners (replicas/ publishes it for the other
 * replicas): the rate it lowered to, as a fraction of its maximum, and the pause the Retry-After asked for (ms).
 */
export interface OwnThrottle {
  factor: number;
  pauseMs: number | undefined;
}

/**
 * A 429 another replica got, as replicas/ reads it from the database at each heartbeat (ages by the database
 * clock): the fraction of the maximum that replica lowered to, how long ago (ms), and the pause left (ms, 0: none).
 */
export interface SharedThrottle {
  factor: number;
  ageMs: number;
  pauseMs: number;
}
