import type { SandboxHandle } from '../../src/sandbox/sandbox.server';
import type { UpstreamClient } from '../../src/upstream/upstream.client';
import type {
  AcceptOfferV2Params,
  ActiveListing,
  InstructionBatch,
  ListTicketV2Params,
  SignedTransaction,
  SubmissionResult,
} from '../../src/upstream/upstream.types';

/**
 * Marketplace fixtures shared by contract and e2e tests: seed an event and a listing in the in-process
 * sandbox, give a buyer a funded custodial wallet, build the instruction batches a purchase, a listing and
 * a cancellation sign, sign and submit them through `UpstreamClient`, and let them land by advancing the
 * sandbox clock. Only the sandbox's public surface is used (`SandboxHandle` and its `admin`).
 */

/** The programmatic admin of a running sandbox (startSandbox(...).admin, startTestApp(...).sandbox.admin). */
export type SandboxAdminApi = SandboxHandle['admin'];

/** A custodial user wallet of the sandbox: the subject signs for it, the address is its on-ledger owner. */
export interface Wallet {
  subject: string;
  address: string;
}

export function userWallet(sandbox: Pick<SandboxHandle, 'admin'>, subject: string): Wallet {
  return { subject, address: sandbox.admin.userWalletAddress(subject) };
}

/** The buyer's custodial wallet, with `fundMinor` of test money added (returns the new balance too). */
export function fundedBuyer(
  sandbox: Pick<SandboxHandle, 'admin'>,
  subject: string,
  fundMinor: bigint,
): Wallet & { balanceMinor: bigint } {
  const balanceMinor = sandbox.admin.fund({ kind: 'user', subject }, fundMinor);
  return { ...userWallet(sandbox, subject), balanceMinor };
}

export interface SeededListing {
  eventId: bigint;
  ticketId: bigint;
  askPriceMinor: bigint;
  seller: Wallet;
  /** Where the sale's proceeds go (the listing's `seller_payout`). */
  sellerPayout: string;
}

/**
 * A new event (its own event id, so listings of other tests never mix in) with one ticket of `seller`
 * listed at `askPriceMinor`, straight on the ledger.
 */
export function seedListing(
  sandbox: Pick<SandboxHandle, 'admin'>,
  input: { seller: string; askPriceMinor: bigint; ticketId?: bigint },
): SeededListing {
  const { eventId } = sandbox.admin.createEvent();
  const view = sandbox.admin.seedListing({
    eventId,
    ticketId: input.ticketId,
    seller: { kind: 'user', subject: input.seller },
    askPriceMinor: input.askPriceMinor,
  });
  return {
    eventId,
    ticketId: BigInt(view.ticket_id),
    askPriceMinor: input.askPriceMinor,
    seller: userWallet(sandbox, input.seller),
    sellerPayout: String(view.seller_payout),
  };
}

/** A new event and a ticket owned by `owner`, not listed. */
export function mintUnlistedTicket(
  sandbox: Pick<SandboxHandle, 'admin'>,
  owner: string,
): { eventId: bigint; ticketId: bigint; owner: Wallet } {
  const { eventId } = sandbox.admin.createEvent();
  const ticket = sandbox.admin.mintTicket({ eventId, owner: { kind: 'user', subject: owner } });
  return { eventId, ticketId: BigInt(ticket.ticket_id), owner: userWallet(sandbox, owner) };
}

/** The integrator's own addresses and the payment token, as the protocol config gives them. */
export interface Integrator {
  authority: string;
  identity: string;
  stablecoinMint: string;
  feePayer: string;
}

export async function integratorOf(client: UpstreamClient): Promise<Integrator> {
  const { raw } = await client.getProtocolConfig();
  const field = (name: string): string => {
    const value = raw[name];
    if (typeof value !== 'string') throw new Error(`protocol config has no ${name}`);
    return value;
  };
  return {
    authority: field('integrator_authority'),
    identity: field('integrator_identity'),
    stablecoinMint: field('stablecoin_mint'),
    feePayer: field('fee_payer'),
  };
}

/** Every active listing of one event, through the client's paginated walk. */
export async function activeListingsOf(client: UpstreamClient, eventId: bigint): Promise<ActiveListing[]> {
  const listings: ActiveListing[] = [];
  for await (const page of client.walkActiveListings({ eventId, limit: 50, maxPages: 100 })) {
    listings.push(...page.items);
  }
  return listings;
}

function text(raw: Record<string, unknown>, name: string): string {
  const value = raw[name];
  if (typeof value !== 'string') throw new Error(`listing has no string ${name}`);
  return value;
}

/**
 * `accept_offer_v2` for one listing as the indexer served it: the listing's identifiers, permit version,
 * payout, royalties, ticket type and mint copied; the buyer is the authority (the wallet that signs).
 */
export function acceptOfferBatch(
  listing: ActiveListing,
  buyer: Wallet,
  integrator: Pick<Integrator, 'authority' | 'identity'>,
): InstructionBatch {
  const { raw } = listing;
  if (listing.eventId === null || listing.ticketId === null) throw new Error('listing without identifiers');
  const royalties = raw.royalty_destinations;
  const params: AcceptOfferV2Params = {
    event_id: listing.eventId,
    ticket_id: listing.ticketId,
    permit_version: BigInt(text(raw, 'permit_version')),
    buyer: buyer.address,
    integrator_authority: integrator.authority,
    seller_payout: text(raw, 'seller_payout'),
    royalty_destinations: Array.isArray(royalties) ? royalties.map(String) : [],
    ticket_type_config: typeof raw.ticket_type_config === 'string' ? raw.ticket_type_config : null,
    integrator_identity: integrator.identity,
    stablecoin_mint: text(raw, 'stablecoin_mint'),
  };
  return { instruction: 'accept_offer_v2', params: [params] };
}

/** `list_ticket_v2` of one ticket by its owner (the authority), listed through this integrator. */
export function listTicketBatch(input: {
  seller: Wallet;
  eventId: bigint;
  ticketId: bigint;
  askPriceMinor: bigint;
  payout: string;
  expiresAtUnixSeconds: bigint;
  integrator: Integrator;
}): InstructionBatch {
  const params: ListTicketV2Params = {
    seller: input.seller.address,
    storage_fee_payer: input.integrator.feePayer,
    listing_integrator_identity: input.integrator.identity,
    listing_integrator_authority: input.integrator.authority,
    stablecoin_mint: input.integrator.stablecoinMint,
    event_id: input.eventId,
    ticket_id: input.ticketId,
    ask_price_minor: input.askPriceMinor,
    buyer_allow: null,
    payout_ata: input.payout,
    expires_at: input.expiresAtUnixSeconds,
    ticket_type_config: null,
  };
  return { instruction: 'list_ticket_v2', params: [params] };
}

/** `cancel_listing_v1` of one listing by `canceller` (the seller or the listing's integrator authority). */
export function cancelListingBatch(eventId: bigint, ticketId: bigint, canceller: Wallet): InstructionBatch {
  return {
    instruction: 'cancel_listing_v1',
    params: [{ event_id: eventId, ticket_id: ticketId, canceller: canceller.address }],
  };
}

export interface Submitted {
  signed: SignedTransaction;
  submission: SubmissionResult;
}

/** Signs `batch` with the user wallet of `signer` under `idempotencyKey`, then submits the signed bytes. */
export async function signAndSubmit(
  client: UpstreamClient,
  signer: Wallet,
  batch: InstructionBatch,
  idempotencyKey: string,
): Promise<Submitted> {
  const signed = await client.signUserTransaction(signer.subject, batch, idempotencyKey);
  const submission = await client.submitTransaction({ signedTransaction: signed.signedTransaction });
  return { signed, submission };
}

/**
 * Lets a submitted transaction land: advances the sandbox clock in `stepMs` steps (at most `maxSteps`)
 * until it is no longer `processing`, then re-submits the same signed bytes (safe, contract 4.3) and returns
 * the upstream's answer, so callers see the status through the client as a real caller would.
 */
export async function land(
  sandbox: Pick<SandboxHandle, 'admin'>,
  client: UpstreamClient,
  signed: SignedTransaction,
  { stepMs = 500, maxSteps = 100 }: { stepMs?: number; maxSteps?: number } = {},
): Promise<SubmissionResult> {
  for (let step = 0; step < maxSteps; step++) {
    if (sandbox.admin.transaction(signed.custodialTransactionId)?.state !== 'processing') break;
    sandbox.admin.advanceTime(stepMs);
  }
  return client.submitTransaction({ signedTransaction: signed.signedTransaction });
}
