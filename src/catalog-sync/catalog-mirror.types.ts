import type { ActiveListing } from '../upstream/upstream.types';

/** Sorts of the listing pages: by exact price either way, or most recently first seen first. */
export const LISTING_SORTS = ['price_asc', 'price_desc', 'newest'] as const;
export type ListingSort = (typeof LISTING_SORTS)[number];

/**
 * A keyset position as carried by a cursor: listings `[price | first-seen key, event_id, ticket_id]`,
 * events `[start key | null, event_id]`. Timestamp keys are exact to the microsecond (see the repository).
 */
export type KeysetPosition = readonly (string | null)[];

export interface ListingsQuery {
  sort: ListingSort;
  /** One event's listings; undefined = every event. u64 decimal strings throughout. */
  eventId?: string;
  minPrice?: string;
  maxPrice?: string;
  limit: number;
  after?: readonly [string, string, string];
}

export interface EventsQuery {
  /** Case-insensitive substring of the name. */
  nameContains?: string;
  /** RFC 3339 instants (exclusive bounds). */
  startsAfter?: string;
  startsBefore?: string;
  limit: number;
  after?: readonly [string | null, string];
}

/**
 * A `listings` row as the read queries return it: u64s as decimal strings (straight from numeric),
 * timestamps as `toISOString()` text (milliseconds), never parsed into `Date`s on the hot path.
 */
export interface ListingRow {
  event_id: string;
  ticket_id: string;
  ask_price_minor: string;
  expires_at: string | null;
  raw: Record<string, unknown>;
  first_seen_at: string;
  last_seen_at: string;
  removed_at: string | null;
  /** first_seen_at to the microsecond, the `newest` sort key. */
  first_seen_key: string;
}

/** An `events` row as the read queries return it (timestamps as `toISOString()` text). */
export interface EventRow {
  event_id: string;
  name: string;
  start_at_raw: string;
  start_at: string | null;
  /** start_at to the microsecond (null when the start was not an RFC 3339 instant). */
  start_key: string | null;
  first_seen_at: string;
  last_seen_at: string;
  removed_at: string | null;
}

export interface ListingSummaryRow {
  active: number;
  lowest: string | null;
  highest: string | null;
}

/** The state query's row (json columns arrive parsed, timestamps inside them as ISO text). */
export interface MirrorStateRow {
  generation: string | null;
  epoch: string;
  events_pass: { id: string; started_at: string } | null;
  listings_pass: { id: string; started_at: string } | null;
  protocol: { decimals: number; mint: string | null; fetched_at: string } | null;
  /** Events walked one by one since the last complete full listings pass: event id → that walk's start. */
  event_walks: Record<string, string> | null;
}

/** One event's own listings `data_as_of` from a per-event walk newer than the last full pass. */
export interface EventAsOf {
  ms: number;
  iso: string;
}

/** What a read answer depends on besides its own rows. */
export interface MirrorState {
  generation: bigint;
  /** `<database epoch>/<generation>`: equal only for the same history at the same point (restores differ). */
  generationKey: string;
  /** Start of the last completed full pass per resource: every active row was seen at or after it. */
  eventsAsOf: Date | null;
  listingsAsOf: Date | null;
  /** The same instants as `toISOString()` text (compared with rows' timestamps without a Date per row). */
  eventsAsOfIso: string | null;
  listingsAsOfIso: string | null;
  protocol: { stablecoinDecimals: number; stablecoinMint: string | null; fetchedAt: Date } | null;
  /**
   * Per-event freshness (docs/read-api.md): the events whose newest complete walk started after the last
   * complete full listings pass, with that start. Not in `version`: an event-scoped answer's cache key carries
   * its own event's instant instead, so a walk moves only that event's answers on.
   */
  eventAsOf: ReadonlyMap<string, EventAsOf>;
  /** Changes whenever anything above except eventAsOf changes: part of every response-cache key. */
  version: string;
}

/** What a live re-read of one listing found (`?fresh=true`). */
export interface LiveListingObservation {
  eventId: bigint;
  ticketId: bigint;
  /** The listing as the upstream returned it, or null: a complete walk of its event did not return it. */
  live: ActiveListing | null;
  /** When the walk that observed it started. */
  observedAt: Date;
}

export interface LiveListingResult {
  /** Whether the mirror row changed (and the generation was bumped). */
  changed: boolean;
  /** The generation after the update (unchanged when nothing changed). */
  generation: bigint;
}
