import { I64_MAX, I64_MIN, U64_MAX } from '../common/int64';
import type { FieldProblem } from '../common/app-error';
import type {
  AcceptOfferV2Params,
  CancelListingV1Params,
  InstructionBatch,
  InstructionName,
  ListTicketV2Params,
} from '../upstream/upstream.types';

type FieldType = 'u64' | 'i64' | 'address' | 'address?' | 'address[]';

/** The contract's tables (upstream API 2.2), field by field: type and whether it is required. */
const FIELDS: Record<InstructionName, Record<string, { type: FieldType; required: boolean }>> = {
  accept_offer_v2: {
    event_id: { type: 'u64', required: true },
    ticket_id: { type: 'u64', required: true },
    permit_version: { type: 'u64', required: true },
    buyer: { type: 'address', required: true },
    integrator_authority: { type: 'address', required: true },
    seller_payout: { type: 'address', required: true },
    royalty_destinations: { type: 'address[]', required: true },
    ticket_type_config: { type: 'address?', required: false },
    integrator_identity: { type: 'address', required: true },
    stablecoin_mint: { type: 'address', required: true },
  },
  cancel_listing_v1: {
    event_id: { type: 'u64', required: true },
    ticket_id: { type: 'u64', required: true },
    canceller: { type: 'address', required: true },
  },
  list_ticket_v2: {
    seller: { type: 'address', required: true },
    storage_fee_payer: { type: 'address', required: true },
    listing_integrator_identity: { type: 'address', required: true },
    listing_integrator_authority: { type: 'address', required: true },
    stablecoin_mint: { type: 'address', required: true },
    event_id: { type: 'u64', required: true },
    ticket_id: { type: 'u64', required: true },
    ask_price_minor: { type: 'u64', required: true },
    buyer_allow: { type: 'address?', required: false },
    payout_ata: { type: 'address', required: true },
    expires_at: { type: 'i64', required: true },
    ticket_type_config: { type: 'address?', required: false },
  },
};

export const INSTRUCTIONS = Object.keys(FIELDS) as InstructionName[];

/** Largest royalty_destinations list accepted (the contract sets none; a transaction has a size limit). */
const MAX_ROYALTY_DESTINATIONS = 16;
/** An address is a string (contract 2.1); we bound it to a sane token: 1..128 characters, no spaces. */
const ADDRESS = /^[\x21-\x7e]{1,128}$/;
const U64_TEXT = /^[0-9]+$/;
const I64_TEXT = /^-?[0-9]+$/;

export type ParsedBatch = { ok: true; batch: InstructionBatch } | { ok: false; problems: FieldProblem[] };

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function int(value: unknown, min: bigint, max: bigint, text: RegExp): bigint | string {
  const range = `an integer from ${min} to ${max}`;
  if (typeof value === 'string') {
    if (!text.test(value) || value.replace(/^-/, '').length > 25) return `must be a decimal string, ${range}`;
    const n = BigInt(value);
    return n >= min && n <= max ? n : `must be ${range}`;
  }
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value)) return 'must be a decimal string (JSON integers only up to 2^53-1)';
    const n = BigInt(value);
    return n >= min && n <= max ? n : `must be ${range}`;
  }
  return `must be a decimal string, ${range}`;
}

function field(type: FieldType, value: unknown): { value: unknown } | string {
  switch (type) {
    case 'u64': {
      const r = int(value, 0n, U64_MAX, U64_TEXT);
      return typeof r === 'string' ? r : { value: r };
    }
    case 'i64': {
      const r = int(value, I64_MIN, I64_MAX, I64_TEXT);
      return typeof r === 'string' ? r : { value: r };
    }
    case 'address':
      return typeof value === 'string' && ADDRESS.test(value)
        ? { value }
        : 'must be an address (1 to 128 visible characters)';
    case 'address?':
      return value === null || (typeof value === 'string' && ADDRESS.test(value))
        ? { value }
        : 'must be an address (1 to 128 visible characters) or null';
    case 'address[]':
      if (!Array.isArray(value) || value.length > MAX_ROYALTY_DESTINATIONS)
        return `must be an array of at most ${MAX_ROYALTY_DESTINATIONS} addresses`;
      return value.every((a) => typeof a === 'string' && ADDRESS.test(a))
        ? { value: [...(value as string[])] }
        : 'must hold only addresses (1 to 128 visible characters)';
  }
  return 'has an unknown type';
}

/**
 * Validates a signing request body `{ platformInstructions: { instruction, params } }` exactly as the
 * contract's tables say (2.2, 8): known instruction, 1..maxParams elements, every field typed and in range,
 * no unknown field, distinct (event_id, ticket_id) pairs. Problems name the element and the field
 * (`platformInstructions.params[2].event_id`). Nothing is sent upstream unless this passes.
 */
export function parseInstructionBatch(body: unknown, maxParams: number): ParsedBatch {
  const problems: FieldProblem[] = [];
  const fail = (f: string, problem: string): void => void problems.push({ field: f, problems: [problem] });
  if (!isObject(body) || !isObject(body.platformInstructions)) {
    fail('platformInstructions', 'must be an object with instruction and params');
    return { ok: false, problems };
  }
  for (const key of Object.keys(body)) if (key !== 'platformInstructions') fail(key, 'is not allowed');
  const root = body.platformInstructions;
  for (const key of Object.keys(root))
    if (key !== 'instruction' && key !== 'params') fail(`platformInstructions.${key}`, 'is not allowed');
  const instruction = root.instruction;
  if (typeof instruction !== 'string' || !INSTRUCTIONS.includes(instruction as InstructionName)) {
    fail('platformInstructions.instruction', `must be one of ${INSTRUCTIONS.join(', ')}`);
    return { ok: false, problems };
  }
  const table = FIELDS[instruction as InstructionName];
  const params = root.params;
  if (!Array.isArray(params) || params.length < 1 || params.length > maxParams) {
    fail('platformInstructions.params', `must be an array of 1 to ${maxParams} elements`);
    return { ok: false, problems };
  }
  const out: Record<string, unknown>[] = [];
  const pairs = new Map<string, number>();
  params.forEach((element: unknown, i) => {
    const at = `platformInstructions.params[${i}]`;
    if (!isObject(element)) return fail(at, 'must be an object');
    const parsed: Record<string, unknown> = {};
    for (const key of Object.keys(element)) if (!(key in table)) fail(`${at}.${key}`, 'is not allowed');
    for (const [name, spec] of Object.entries(table)) {
      if (!Object.hasOwn(element, name) || element[name] === undefined) {
        if (spec.required) fail(`${at}.${name}`, 'is required');
        continue;
      }
      const result = field(spec.type, element[name]);
      if (typeof result === 'string') fail(`${at}.${name}`, result);
      else parsed[name] = result.value;
    }
    if (typeof parsed.event_id === 'bigint' && typeof parsed.ticket_id === 'bigint') {
      const pair = `${parsed.event_id}/${parsed.ticket_id}`;
      const first = pairs.get(pair);
      if (first !== undefined)
        fail(`${at}.ticket_id`, `repeats the (event_id, ticket_id) pair of params[${first}]`);
      else pairs.set(pair, i);
    }
    out.push(parsed);
  });
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    batch: { instruction, params: out } as unknown as
      | { instruction: 'accept_offer_v2'; params: AcceptOfferV2Params[] }
      | { instruction: 'cancel_listing_v1'; params: CancelListingV1Params[] }
      | { instruction: 'list_ticket_v2'; params: ListTicketV2Params[] },
  };
}

/**
 * The batch as wire JSON (`{ platformInstructions: … }`): fields in the contract's order, 64-bit values as
 * canonical decimal strings, absent optional fields omitted. Stored with the record (the tracker re-signs
 * from it with the same key) and hashed into the request fingerprint, so equal requests compare equal.
 */
export function canonicalBatchJson(batch: InstructionBatch): string {
  const table = FIELDS[batch.instruction];
  const params = (batch.params as readonly object[]).map((p) => {
    const record = p as Record<string, unknown>;
    const out: Record<string, unknown> = {};
    for (const name of Object.keys(table)) {
      const value = record[name];
      if (value === undefined) continue;
      out[name] = typeof value === 'bigint' ? value.toString() : value;
    }
    return out;
  });
  return JSON.stringify({ platformInstructions: { instruction: batch.instruction, params } });
}
