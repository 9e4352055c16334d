import type { ActiveListing, UpcomingEvent } from '../upstream/upstream.types';

/** An events row as written by a sync page (raw is JSON text, u64 identifiers as decimal strings). */
export interface EventRow {
  eventId: bigint;
  name: string;
  startAtRaw: string;
  startAt: Date | null;
  raw: string;
}

/** A listings row as written by a sync page. */
export interface ListingRow {
  eventId: bigint;
  ticketId: bigint;
  askPriceMinor: bigint;
  /** i64 unix seconds when the item carried a valid `expires_at`, else null. */
  expiresAt: bigint | null;
  raw: string;
}

export type SkipReason = 'event_id missing or null' | 'ticket_id missing or null' | 'unstorable text';

export type Mapped<T> = { ok: true; row: T } | { ok: false; reason: SkipReason };

const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;
const I64_TEXT = /^-?(0|[1-9][0-9]{0,18})$/;
/** Other 64-bit integer fields of a listing: stored as decimal strings whichever way they arrived. */
const INTEGER_FIELDS = ['permit_version', 'expires_at'] as const;
const I64_MIN = -(2n ** 63n);
const I64_MAX = 2n ** 63n - 1n;

/** `start_at` as an instant when it is RFC 3339, else null (kept raw either way). */
export function parseStartAt(text: string): Date | null {
  if (!RFC3339.test(text)) return null;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? null : new Date(ms);
}

/** An i64 given as a decimal string or a safe JSON integer, else null. */
export function parseI64(value: unknown): bigint | null {
  let n: bigint;
  if (typeof value === 'number' && Number.isSafeInteger(value)) n = BigInt(value);
  else if (typeof value === 'string' && I64_TEXT.test(value)) n = BigInt(value);
  else return null;
  return n >= I64_MIN && n <= I64_MAX ? n : null;
}

/**
 * The item as JSON text for a `jsonb` column. The given identifiers replace the received ones as decimal
 * strings (a JSON integer id and its string form are the same row, so a pass never rewrites a row only
 * because the upstream changed the encoding). Unsafe integers in unknown fields become their digits as
 * strings (UnsafeJsonInteger.toJSON). Null when PostgreSQL's jsonb cannot hold it (a \u0000 in a string).
 */
function rawText(raw: Record<string, unknown>, ids: Record<string, string>): string | null {
  // Usually every id already arrived as its decimal string: no copy of the item needed then.
  let same = true;
  for (const key in ids) {
    if (raw[key] !== ids[key]) {
      same = false;
      break;
    }
  }
  const text = JSON.stringify(same ? raw : { ...raw, ...ids });
  return text.includes('\\u0000') ? null : text;
}

/** Upstream event → events row; an event without an id is skipped (never stored under an invented key). */
export function mapEvent(item: UpcomingEvent): Mapped<EventRow> {
  if (item.eventId === null) return { ok: false, reason: 'event_id missing or null' };
  const raw = rawText(item.raw, { event_id: item.eventId.toString() });
  if (raw === null || item.name.includes('\u0000') || item.startAt.includes('\u0000')) {
    return { ok: false, reason: 'unstorable text' };
  }
  return {
    ok: true,
    row: {
      eventId: item.eventId,
      name: item.name,
      startAtRaw: item.startAt,
      startAt: parseStartAt(item.startAt),
      raw,
    },
  };
}

/** Upstream listing → listings row; a listing without event_id or ticket_id is skipped. */
export function mapListing(item: ActiveListing): Mapped<ListingRow> {
  if (item.eventId === null) return { ok: false, reason: 'event_id missing or null' };
  if (item.ticketId === null) return { ok: false, reason: 'ticket_id missing or null' };
  const ids: Record<string, string> = {
    event_id: item.eventId.toString(),
    ticket_id: item.ticketId.toString(),
    ask_price_minor: item.askPriceMinor.toString(),
  };
  for (const field of INTEGER_FIELDS) {
    const value = item.raw[field];
    if (typeof value === 'number' && Number.isSafeInteger(value)) ids[field] = String(value);
  }
  const raw = rawText(item.raw, ids);
  if (raw === null) return { ok: false, reason: 'unstorable text' };
  return {
    ok: true,
    row: {
      eventId: item.eventId,
      ticketId: item.ticketId,
      askPriceMinor: item.askPriceMinor,
      expiresAt: parseI64(item.raw.expires_at),
      raw,
    },
  };
}

/** One upstream page's rows and the (database-clock) time the read that produced it started. */
export interface PageRows<T> {
  rows: readonly T[];
  observedAt: Date;
}

export interface MappedPage<T> {
  /** One row per key (a key repeated within the page keeps its last occurrence). */
  rows: T[];
  skipped: Partial<Record<SkipReason, number>>;
  skippedCount: number;
}

/** Maps a page, counts skips per reason and keeps one row per key (one upsert cannot touch a row twice). */
export function mapPage<I, T>(
  items: readonly I[],
  map: (item: I) => Mapped<T>,
  key: (row: T) => string,
): MappedPage<T> {
  const byKey = new Map<string, T>();
  const skipped: Partial<Record<SkipReason, number>> = {};
  let skippedCount = 0;
  for (const item of items) {
    const mapped = map(item);
    if (mapped.ok) {
      const k = key(mapped.row);
      byKey.delete(k);
      byKey.set(k, mapped.row);
    } else {
      skipped[mapped.reason] = (skipped[mapped.reason] ?? 0) + 1;
      skippedCount++;
    }
  }
  return { rows: [...byKey.values()], skipped, skippedCount };
}

export const eventKey = (row: EventRow): string => row.eventId.toString();
export const listingKey = (row: ListingRow): string => `${row.eventId}:${row.ticketId}`;
