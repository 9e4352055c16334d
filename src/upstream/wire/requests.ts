import { U64_MAX } from '../../common/int64';
import { encodeI64, encodeU64 } from './int.codec';
import type { InstructionBatch, SubmitTransactionInput } from '../upstream.types';

/** A request the client refuses to send (caller bug); the client turns it into REJECTED with 0 attempts. */
export class RequestShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RequestShapeError';
  }
}

// Header-safe: visible ASCII, inner spaces allowed, no leading/trailing space (HTTP would trim it).
const IDEMPOTENCY_KEY = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/** Contract 4.1/8: 1..255 characters. We also require header-safe ASCII so it is sent byte-exact. */
export function assertIdempotencyKey(key: unknown): asserts key is string {
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
    throw new RequestShapeError(
      'idempotency key must be 1 to 255 printable ASCII characters (no edge spaces)',
    );
  }
}

export function assertSubject(subject: unknown): asserts subject is string {
  if (typeof subject !== 'string' || subject.length === 0)
    throw new RequestShapeError('subject must be a non-empty string');
}

/**
 * encodeURIComponent for a path segment or query value. A string with a lone surrogate has no UTF-8 form,
 * so it cannot reach the upstream byte-exact: refused as a request error instead of a stray URIError.
 */
export function encodeComponent(value: string, what: string): string {
  try {
    return encodeURIComponent(value);
  } catch {
    throw new RequestShapeError(`${what} must be well-formed Unicode`);
  }
}

function address(value: unknown, at: string): string {
  if (typeof value !== 'string' || value.length === 0)
    throw new RequestShapeError(`${at} must be a non-empty address string`);
  return value;
}

function optionalAddress(value: unknown, at: string): string | null | undefined {
  return value === undefined || value === null ? value : address(value, at);
}

function u64(value: unknown, at: string): string {
  if (typeof value !== 'bigint') throw new RequestShapeError(`${at} must be a bigint`);
  try {
    return encodeU64(value);
  } catch {
    throw new RequestShapeError(`${at} must be within 0..${U64_MAX}`);
  }
}

function i64(value: unknown, at: string): string {
  if (typeof value !== 'bigint') throw new RequestShapeError(`${at} must be a bigint`);
  try {
    return encodeI64(value);
  } catch {
    throw new RequestShapeError(`${at} must be within the i64 range`);
  }
}

/** Drops undefined optional fields (never sent as null or "null"); an explicit null stays null. */
function compact(record: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined));
}

function encodeParams(batch: InstructionBatch): Record<string, unknown>[] {
  switch (batch.instruction) {
    case 'accept_offer_v2':
      return batch.params.map((p, i) => {
        const at = `params[${i}]`;
        if (!Array.isArray(p.royalty_destinations))
          throw new RequestShapeError(`${at}.royalty_destinations must be an array`);
        return compact({
          event_id: u64(p.event_id, `${at}.event_id`),
          ticket_id: u64(p.ticket_id, `${at}.ticket_id`),
          permit_version: u64(p.permit_version, `${at}.permit_version`),
          buyer: address(p.buyer, `${at}.buyer`),
          integrator_authority: address(p.integrator_authority, `${at}.integrator_authority`),
          seller_payout: address(p.seller_payout, `${at}.seller_payout`),
          royalty_destinations: p.royalty_destinations.map((a, j) =>
            address(a, `${at}.royalty_destinations[${j}]`),
          ),
          ticket_type_config: optionalAddress(p.ticket_type_config, `${at}.ticket_type_config`),
          integrator_identity: address(p.integrator_identity, `${at}.integrator_identity`),
          stablecoin_mint: address(p.stablecoin_mint, `${at}.stablecoin_mint`),
        });
      });
    case 'cancel_listing_v1':
      return batch.params.map((p, i) => {
        const at = `params[${i}]`;
        return {
          event_id: u64(p.event_id, `${at}.event_id`),
          ticket_id: u64(p.ticket_id, `${at}.ticket_id`),
          canceller: address(p.canceller, `${at}.canceller`),
        };
      });
    case 'list_ticket_v2':
      return batch.params.map((p, i) => {
        const at = `params[${i}]`;
        return compact({
          seller: address(p.seller, `${at}.seller`),
          storage_fee_payer: address(p.storage_fee_payer, `${at}.storage_fee_payer`),
          listing_integrator_identity: address(
            p.listing_integrator_identity,
            `${at}.listing_integrator_identity`,
          ),
          listing_integrator_authority: address(
            p.listing_integrator_authority,
            `${at}.listing_integrator_authority`,
          ),
          stablecoin_mint: address(p.stablecoin_mint, `${at}.stablecoin_mint`),
          event_id: u64(p.event_id, `${at}.event_id`),
          ticket_id: u64(p.ticket_id, `${at}.ticket_id`),
          ask_price_minor: u64(p.ask_price_minor, `${at}.ask_price_minor`),
          buyer_allow: optionalAddress(p.buyer_allow, `${at}.buyer_allow`),
          payout_ata: address(p.payout_ata, `${at}.payout_ata`),
          expires_at: i64(p.expires_at, `${at}.expires_at`),
          ticket_type_config: optionalAddress(p.ticket_type_config, `${at}.ticket_type_config`),
        });
      });
  }
  throw new RequestShapeError('unknown instruction');
}

/**
 * Request body of both signing operations (contract 2.2): `{ platformInstructions: { instruction, params } }`
 * with every 64-bit value as a decimal string. Checks the contract's rules first: at least one params
 * element, distinct (event_id, ticket_id) pairs (4.1 rule 2).
 */
export function encodeInstructionBatch(batch: InstructionBatch): string {
  const known = ['accept_offer_v2', 'cancel_listing_v1', 'list_ticket_v2'];
  if (typeof batch !== 'object' || batch === null || !known.includes(batch.instruction)) {
    throw new RequestShapeError(`instruction must be one of ${known.join(', ')}`);
  }
  if (!Array.isArray(batch.params) || batch.params.length === 0) {
    throw new RequestShapeError('params must have at least one element');
  }
  const params = encodeParams(batch);
  const pairs = new Set<string>();
  params.forEach((p, i) => {
    const pair = `${String(p.event_id)}/${String(p.ticket_id)}`;
    if (pairs.has(pair)) throw new RequestShapeError(`params[${i}] repeats an (event_id, ticket_id) pair`);
    pairs.add(pair);
  });
  return JSON.stringify({ platformInstructions: { instruction: batch.instruction, params } });
}

/** Contract 2.5: additionalSignatures defaults to an empty array and is always sent. */
export function encodeSubmission(input: SubmitTransactionInput): string {
  if (typeof input?.signedTransaction !== 'string' || input.signedTransaction.length === 0) {
    throw new RequestShapeError('signedTransaction must be a non-empty Base64 string');
  }
  const extra = input.additionalSignatures ?? [];
  if (!Array.isArray(extra)) throw new RequestShapeError('additionalSignatures must be an array');
  const additionalSignatures = extra.map((s, i) => ({
    address: address(s?.address, `additionalSignatures[${i}].address`),
    signature: address(s?.signature, `additionalSignatures[${i}].signature`),
  }));
  return JSON.stringify({ signedTransaction: input.signedTransaction, additionalSignatures });
}

/** A query string, each name and value encoded exactly once; undefined values are left out. */
export function query(params: Record<string, string | number | undefined>): string {
  let text = '';
  for (const name in params) {
    const value = params[name];
    if (value === undefined) continue;
    // Encoded exactly once; '+' and ' ' become %2B and %20, so an opaque cursor arrives byte-exact. An empty
    // cursor is a cursor (contract 2.6: only null ends a walk): it is sent as `cursor=`.
    text += `${text === '' ? '?' : '&'}${encodeComponent(name, 'query name')}=${encodeComponent(String(value), name)}`;
  }
  return text;
}

/** The page size to send: the caller's or the configured default; a positive safe integer. */
export function pageLimit(limit: number | undefined, fallback: number): number {
  const value = limit ?? fallback;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RequestShapeError('limit must be a positive integer');
  return value;
}

/** A u64 query parameter as canonical decimal text. */
export function u64Param(value: bigint, name: string): string {
  try {
    return encodeU64(value);
  } catch {
    throw new RequestShapeError(`${name} must be a u64 bigint`);
  }
}
