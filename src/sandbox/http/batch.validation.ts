import type {
  AcceptOfferParams,
  CancelListingParams,
  InstructionBatch,
  ListTicketParams,
} from '../chain/instruction.model';
import { FieldReader, type FieldProblem } from './request.validation';

export type BatchValidation =
  { ok: true; batch: InstructionBatch } | { ok: false; status: 400 | 422; problems: FieldProblem[] };

const ACCEPT_FIELDS = [
  'event_id',
  'ticket_id',
  'permit_version',
  'buyer',
  'integrator_authority',
  'seller_payout',
  'royalty_destinations',
  'ticket_type_config',
  'integrator_identity',
  'stablecoin_mint',
] as const;
const CANCEL_FIELDS = ['event_id', 'ticket_id', 'canceller'] as const;
const LIST_FIELDS = [
  'seller',
  'storage_fee_payer',
  'listing_integrator_identity',
  'listing_integrator_authority',
  'stablecoin_mint',
  'event_id',
  'ticket_id',
  'ask_price_minor',
  'buyer_allow',
  'payout_ata',
  'expires_at',
  'ticket_type_config',
] as const;

function acceptParams(r: FieldReader, p: Record<string, unknown>, at: string): AcceptOfferParams {
  return {
    eventId: r.u64(p, 'event_id', at),
    ticketId: r.u64(p, 'ticket_id', at),
    permitVersion: r.u64(p, 'permit_version', at),
    buyer: r.address(p, 'buyer', at),
    integratorAuthority: r.address(p, 'integrator_authority', at),
    sellerPayout: r.address(p, 'seller_payout', at),
    royaltyDestinations: r.addressList(p, 'royalty_destinations', at),
    ticketTypeConfig: r.nullableAddress(p, 'ticket_type_config', at),
    integratorIdentity: r.address(p, 'integrator_identity', at),
    stablecoinMint: r.address(p, 'stablecoin_mint', at),
  };
}

function cancelParams(r: FieldReader, p: Record<string, unknown>, at: string): CancelListingParams {
  return {
    eventId: r.u64(p, 'event_id', at),
    ticketId: r.u64(p, 'ticket_id', at),
    canceller: r.address(p, 'canceller', at),
  };
}

function listParams(r: FieldReader, p: Record<string, unknown>, at: string): ListTicketParams {
  return {
    seller: r.address(p, 'seller', at),
    storageFeePayer: r.address(p, 'storage_fee_payer', at),
    listingIntegratorIdentity: r.address(p, 'listing_integrator_identity', at),
    listingIntegratorAuthority: r.address(p, 'listing_integrator_authority', at),
    stablecoinMint: r.address(p, 'stablecoin_mint', at),
    eventId: r.u64(p, 'event_id', at),
    ticketId: r.u64(p, 'ticket_id', at),
    askPriceMinor: r.u64(p, 'ask_price_minor', at),
    buyerAllow: r.nullableAddress(p, 'buyer_allow', at),
    payoutAta: r.address(p, 'payout_ata', at),
    expiresAt: r.i64(p, 'expires_at', at),
    ticketTypeConfig: r.nullableAddress(p, 'ticket_type_config', at),
  };
}

function readParams<T>(
  r: FieldReader,
  raw: unknown,
  fields: readonly string[],
  read: (r: FieldReader, p: Record<string, unknown>, at: string) => T,
): T[] {
  const at = 'platformInstructions.params';
  if (!Array.isArray(raw) || raw.length === 0) {
    r.fail(at, 'must be an array with at least 1 element');
    return [];
  }
  return raw.map((item: unknown, i) => {
    const record = r.object(item, `${at}[${i}]`, fields);
    return record === undefined ? (undefined as T) : read(r, record, `${at}[${i}]`);
  });
}

/**
 * Validates the instruction batch of both signing operations (contract 2.2). Shape problems are 400; a batch
 * that repeats an (event_id, ticket_id) pair is well-formed but breaks rule 4.1.2, so it is 422.
 */
export function validateInstructionBatch(body: unknown): BatchValidation {
  const r = new FieldReader([]);
  const root = r.object(body, '$', ['platformInstructions']);
  const instructions = root === undefined ? undefined : root.platformInstructions;
  if (root !== undefined && instructions === undefined) r.fail('$.platformInstructions', 'is required');
  const obj =
    instructions === undefined
      ? undefined
      : r.object(instructions, 'platformInstructions', ['instruction', 'params']);
  if (obj === undefined) return { ok: false, status: 400, problems: r.problems };
  let batch: InstructionBatch | undefined;
  switch (obj.instruction) {
    case 'accept_offer_v2':
      batch = {
        instruction: obj.instruction,
        params: readParams(r, obj.params, ACCEPT_FIELDS, acceptParams),
      };
      break;
    case 'cancel_listing_v1':
      batch = {
        instruction: obj.instruction,
        params: readParams(r, obj.params, CANCEL_FIELDS, cancelParams),
      };
      break;
    case 'list_ticket_v2':
      batch = { instruction: obj.instruction, params: readParams(r, obj.params, LIST_FIELDS, listParams) };
      break;
    default:
      r.fail(
        'platformInstructions.instruction',
        'must be accept_offer_v2, cancel_listing_v1 or list_ticket_v2',
      );
  }
  if (batch === undefined || r.problems.length > 0) return { ok: false, status: 400, problems: r.problems };
  const seen = new Set<string>();
  for (const [i, p] of batch.params.entries()) {
    const pair = `${p.eventId}:${p.ticketId}`;
    if (seen.has(pair)) {
      r.fail(`platformInstructions.params[${i}]`, `repeats the (event_id, ticket_id) pair ${pair}`);
    }
    seen.add(pair);
  }
  return r.problems.length > 0 ? { ok: false, status: 422, problems: r.problems } : { ok: true, batch };
}
