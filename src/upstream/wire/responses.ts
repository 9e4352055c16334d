// One piece: the decoders of every upstream response body of contract v0.3.0 (signing, submission, the two
// pages, protocol config, purchase status), each a short function over the same strict helpers (object,
// exactKeys, string, identifier) and one error type; one file per response would export those helpers only to
// share them.
import { decodeU64 } from './int.codec';
import { mayHaveLostInteger, parseJsonSafely, parsePlainJson } from './safe-json';
import {
  SUBMISSION_STATUSES,
  type ActiveListing,
  type Page,
  type ProtocolConfig,
  type PurchaseStatus,
  type SignedTransaction,
  type SubmissionResult,
  type SubmissionStatus,
  type UpcomingEvent,
} from '../upstream.types';

/** A response that does not match the contract; the client turns it into BAD_RESPONSE. */
export class ResponseShapeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ResponseShapeError';
  }
}

type Json = Record<string, unknown>;

const HEX64 = /^[0-9a-fA-F]{64}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

function object(value: unknown, what: string): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ResponseShapeError(`${what} must be a JSON object`);
  }
  return value as Json;
}

function exactKeys(
  record: Json,
  required: readonly string[],
  optional: readonly string[],
  what: string,
): void {
  for (const key of required)
    if (!Object.hasOwn(record, key)) throw new ResponseShapeError(`${what}.${key} is missing`);
  const allowed = new Set([...required, ...optional]);
  const extra = Object.keys(record).filter((key) => !allowed.has(key));
  // Names of unexpected fields are the upstream's, not data; cut them short anyway.
  if (extra.length > 0) throw new ResponseShapeError(`${what} has unexpected field ${extra[0].slice(0, 40)}`);
}

function string(record: Json, key: string, what: string, nonEmpty = true): string {
  const value = record[key];
  if (typeof value !== 'string' || (nonEmpty && value.length === 0)) {
    throw new ResponseShapeError(`${what}.${key} must be a${nonEmpty ? ' non-empty' : ''} string`);
  }
  return value;
}

/** Contract 2.3, strict: exactly the nine fields, 64-hex id, Base64 transaction. */
export function parseSignedTransaction(body: unknown): SignedTransaction {
  const what = 'signed transaction';
  const r = object(body, what);
  const fields = [
    'custodialTransactionId',
    'signerAddress',
    'feePayerAddress',
    'signedTransaction',
    'message',
    'signature',
    'feePayerSignature',
    'requiredSigners',
    'recentBlockhash',
  ] as const;
  exactKeys(r, fields, [], what);
  const id = string(r, 'custodialTransactionId', what);
  if (!HEX64.test(id))
    throw new ResponseShapeError(`${what}.custodialTransactionId must be 64 hexadecimal characters`);
  const signedTransaction = string(r, 'signedTransaction', what);
  if (!BASE64.test(signedTransaction))
    throw new ResponseShapeError(`${what}.signedTransaction must be Base64`);
  const signers = r.requiredSigners;
  if (!Array.isArray(signers) || !signers.every((s) => typeof s === 'string' && s.length > 0)) {
    throw new ResponseShapeError(`${what}.requiredSigners must be an array of addresses`);
  }
  return {
    custodialTransactionId: id,
    signerAddress: string(r, 'signerAddress', what),
    feePayerAddress: string(r, 'feePayerAddress', what),
    signedTransaction,
    message: string(r, 'message', what),
    signature: string(r, 'signature', what),
    feePayerSignature: string(r, 'feePayerSignature', what),
    requiredSigners: [...(signers as string[])],
    recentBlockhash: string(r, 'recentBlockhash', what),
  };
}

/** Contract 2.4, strict: status is one of four values or null (the key must be present). */
export function parseSubmissionResult(body: unknown): SubmissionResult {
  const what = 'submission result';
  const r = object(body, what);
  exactKeys(r, ['custodialTransactionId', 'transactionSignature', 'status'], ['failureReason'], what);
  const id = string(r, 'custodialTransactionId', what);
  if (!HEX64.test(id))
    throw new ResponseShapeError(`${what}.custodialTransactionId must be 64 hexadecimal characters`);
  const status = r.status;
  if (status !== null && !SUBMISSION_STATUSES.includes(status as SubmissionStatus)) {
    throw new ResponseShapeError(`${what}.status must be ${SUBMISSION_STATUSES.join(', ')} or null`);
  }
  const result: SubmissionResult = {
    custodialTransactionId: id,
    transactionSignature: string(r, 'transactionSignature', what),
    status: status as SubmissionStatus | null,
  };
  if (Object.hasOwn(r, 'failureReason')) result.failureReason = string(r, 'failureReason', what);
  return result;
}

/**
 * A page envelope (contract 2.6): `items` an array, `next_cursor` a string or null (the key must be present).
 * An empty string is a cursor like any other: only null ends a walk (contract 4.8).
 */
function envelope(body: unknown, what: string): { list: unknown[]; next: string | null } {
  const r = object(body, what);
  const list = r.items;
  if (!Array.isArray(list)) throw new ResponseShapeError(`${what}.items must be an array`);
  if (!Object.hasOwn(r, 'next_cursor')) throw new ResponseShapeError(`${what}.next_cursor is missing`);
  const next = r.next_cursor;
  if (next !== null && typeof next !== 'string') {
    throw new ResponseShapeError(`${what}.next_cursor must be a string or null`);
  }
  return { list, next };
}

/** An item's failure (`.event_id must …`) with its place spelled out: only built when one fails. */
function itemError(error: unknown, what: string, index: number): unknown {
  if (!(error instanceof ResponseShapeError)) return error;
  return new ResponseShapeError(`${what}.items[${index}]${error.message}`);
}

function itemObject(value: unknown): Json {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new ResponseShapeError(' must be a JSON object');
  }
  return value as Json;
}

/** A u64 identifier that may be null or missing (indexed identifiers can be: contract 2.7). */
function identifier(record: Json, key: string): bigint | null {
  const value = record[key];
  if (value === null || value === undefined) return null;
  const decoded = decodeU64(value);
  if (typeof decoded === 'string') throw new ResponseShapeError(`.${key} ${decoded}`);
  return decoded;
}

function eventItem(value: unknown): UpcomingEvent {
  const r = itemObject(value);
  const eventId = identifier(r, 'event_id');
  const name = r.name;
  if (typeof name !== 'string') throw new ResponseShapeError('.name must be a string');
  const startAt = r.start_at;
  if (typeof startAt !== 'string' || startAt.length === 0) {
    throw new ResponseShapeError('.start_at must be a non-empty string');
  }
  return new EventItem(eventId, name, startAt, r);
}

/** Contract 2.6/2.7, tolerant: event_id (u64 or null), name and start_at checked; the rest kept in raw. */
export function parseEventsPage(body: unknown): Page<UpcomingEvent> {
  const what = 'events page';
  const { list, next } = envelope(body, what);
  const items: UpcomingEvent[] = [];
  let i = 0;
  try {
    for (; i < list.length; i++) items.push(eventItem(list[i]));
  } catch (error) {
    throw itemError(error, what, i);
  }
  return { items, nextCursor: next };
}

/** Contract 2.6/2.7, tolerant: event_id/ticket_id (u64 or null), ask_price_minor (u64) checked. */
export function parseListingsPage(body: unknown): Page<ActiveListing> {
  return listingsPage(body, false) as Page<ActiveListing>;
}

/**
 * parseListingsPage(parseJsonSafely(text)), with the same result and the same errors, in one pass over the
 * items: the body is parsed by JSON.parse alone and each item's values are checked for a lost integer
 * (mayHaveLostInteger) while the item is decoded. Only when one may be lost is the text handed to
 * parseJsonSafely and the page decoded from its exact result.
 */
export function parseListingsText(text: string): Page<ActiveListing> {
  return listingsPage(parsePlainJson(text), true) ?? parseListingsPage(parseJsonSafely(text));
}

/**
 * A decoded listing. A class, not an object literal, on purpose. V8 keeps an allocation site per object literal
 * and, once most objects from a site survive young-generation GCs, allocates that site's objects in the old
 * generation ("allocation-site pretenuring"). A page's items do survive the scavenge that runs while the next
 * page is read. In 5 of 66 bench processes, the client walk ran a quarter slower, with 10
 * mark-compacts per run instead of 3 and pages promoted whole (an old-space item keeps its young `raw` alive
 * through every scavenge). That mode never appeared under `--no-allocation-site-pretenuring` (10 runs), nor with
 * the items built by `new` (55 runs): objects built by a constructor have no allocation site and start young.
 * docs/BENCHMARKS.md, upstream walk, Session 7.
 */
class ListingItem implements ActiveListing {
  constructor(
    public eventId: bigint | null,
    public ticketId: bigint | null,
    public askPriceMinor: bigint,
    public raw: Json,
  ) {}
}

/** A decoded upcoming event: a class for the reason given at ListingItem. */
class EventItem implements UpcomingEvent {
  constructor(
    public eventId: bigint | null,
    public name: string,
    public startAt: string,
    public raw: Json,
  ) {}
}

/** Whether a value other than a string may have lost an integer in JSON.parse (see safe-json). */
function lost(value: unknown): boolean {
  return typeof value !== 'string' && value !== null && mayHaveLostInteger(value);
}

/**
 * The listings page decoder. `checkLost`: `body` is JSON.parse's result, not parseJsonSafely's, so each item
 * is checked for a lost integer before it is judged (its values before its fields are decoded); undefined
 * when one may be lost, so the caller decodes the exact parse. The envelope needs no check: its other
 * fields are not kept, and a lost integer as `items` or `next_cursor` is refused with the same message.
 *
 * One pass over the items, each field read and decoded once. A page lists many items of one event in a
 * row, so an `event_id` string equal to the previous item's reuses its bigint (an immutable value: sharing
 * it is safe) instead of decoding it again.
 */
function listingsPage(body: unknown, checkLost: boolean): Page<ActiveListing> | undefined {
  const what = 'listings page';
  const { list, next } = envelope(body, what);
  const n = list.length;
  const items: ActiveListing[] = [];
  let lastEventText: string | undefined;
  let lastEventId: bigint | null = null;
  let i = 0;
  try {
    for (; i < n; i++) {
      const value = list[i];
      // A lost integer as the item itself: the exact parse makes it an UnsafeJsonInteger (an object).
      if (checkLost && typeof value === 'number' && lost(value)) return undefined;
      const r = itemObject(value);
      if (checkLost) for (const key in r) if (lost(r[key])) return undefined;
      const askPriceMinor = decodeU64(r.ask_price_minor);
      if (typeof askPriceMinor === 'string') {
        throw new ResponseShapeError(`.ask_price_minor ${askPriceMinor}`);
      }
      const eventText = r.event_id;
      let eventId: bigint | null;
      if (typeof eventText === 'string' && eventText === lastEventText) eventId = lastEventId;
      else {
        eventId = identifier(r, 'event_id');
        if (typeof eventText === 'string') {
          lastEventText = eventText;
          lastEventId = eventId;
        }
      }
      items.push(new ListingItem(eventId, identifier(r, 'ticket_id'), askPriceMinor, r));
    }
  } catch (error) {
    throw itemError(error, what, i);
  }
  return { items, nextCursor: next };
}

export const MAX_STABLECOIN_DECIMALS = 18;

/** Protocol config: stablecoin_decimals must be an integer 0..18 (JSON integer or decimal string). */
export function parseProtocolConfig(body: unknown): ProtocolConfig {
  const what = 'protocol config';
  const r = object(body, what);
  const raw = r.stablecoin_decimals;
  const decimals = typeof raw === 'string' && /^[0-9]{1,2}$/.test(raw) ? Number(raw) : raw;
  if (
    typeof decimals !== 'number' ||
    !Number.isInteger(decimals) ||
    decimals < 0 ||
    decimals > MAX_STABLECOIN_DECIMALS
  ) {
    throw new ResponseShapeError(
      `${what}.stablecoin_decimals must be an integer from 0 to ${MAX_STABLECOIN_DECIMALS}`,
    );
  }
  const mint = r.stablecoin_mint;
  if (mint !== undefined && mint !== null && (typeof mint !== 'string' || mint.length === 0)) {
    throw new ResponseShapeError(`${what}.stablecoin_mint must be a non-empty string when present`);
  }
  return { stablecoinDecimals: decimals, stablecoinMint: typeof mint === 'string' ? mint : null, raw: r };
}

/** Purchase status (fields not shown by the contract): an object; `status` a string or null when present. */
export function parsePurchaseStatus(body: unknown): PurchaseStatus {
  const what = 'purchase status';
  const r = object(body, what);
  const status = r.status;
  if (status !== undefined && status !== null && typeof status !== 'string') {
    throw new ResponseShapeError(`${what}.status must be a string or null`);
  }
  return { status: typeof status === 'string' ? status : null, raw: r };
}
