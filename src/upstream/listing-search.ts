import type { UpstreamClient } from './upstream.client';
import type { ActiveListing, UpstreamCallOptions } from './upstream.types';

/**
 * How one item of a walk relates to the listing searched for. The contract lets indexed identifiers be null
 * (2.7, 2.8 rule 2): an item whose known identifiers agree with the listing's and whose others are null
 * `maybe` is it. An item with a known identifier that differs is `other`, whatever its nulls.
 */
export type ItemMatch = 'match' | 'maybe' | 'other';

export function matchItem(
  item: Pick<ActiveListing, 'eventId' | 'ticketId'>,
  eventId: bigint,
  ticketId: bigint,
): ItemMatch {
  if (item.eventId !== null && item.eventId !== eventId) return 'other';
  if (item.ticketId !== null && item.ticketId !== ticketId) return 'other';
  return item.eventId === null || item.ticketId === null ? 'maybe' : 'match';
}

/**
 * What a live search for one listing can say:
 * - `found`: an item with both identifiers equal to the listing's;
 * - `absent`: a complete walk (next_cursor null reached) in which no item could be it — the only proof that
 *   a listing is no longer active;
 * - `undecided`: a complete walk without it, but `maybe` items with null identifiers could be it: nothing is
 *   proved either way, so callers ask again later instead of calling it gone.
 * A walk that ends early (an upstream failure, a timeout) proves nothing either: it throws, never answers.
 */
export type ListingSearchResult =
  { kind: 'found'; listing: ActiveListing } | { kind: 'absent' } | { kind: 'undecided'; maybe: number };

/** The decision of one search, fed page by page (pure: no I/O, unit-tested with fast-check). */
export class ListingSearch {
  private maybe = 0;

  constructor(
    private readonly eventId: bigint,
    private readonly ticketId: bigint,
  ) {}

  /** The listing when this page holds it; counts the items that could be it. */
  see(items: readonly ActiveListing[]): ActiveListing | undefined {
    for (const item of items) {
      const match = matchItem(item, this.eventId, this.ticketId);
      if (match === 'match') return item;
      if (match === 'maybe') this.maybe++;
    }
    return undefined;
  }

  /** The verdict once the walk reached next_cursor = null without finding the listing. */
  complete(): Exclude<ListingSearchResult, { kind: 'found' }> {
    return this.maybe === 0 ? { kind: 'absent' } : { kind: 'undecided', maybe: this.maybe };
  }
}

/** Pages of one listing search walk (a revalidation, a `?fresh=true` read): the contract's largest pages. */
export const LISTING_SEARCH_MAX_PAGES = 10_000;

/**
 * Searches one listing live: walks its event's active listings (the contract has no single-listing read)
 * until the ticket appears or next_cursor is null. Throws the walk's UpstreamError when it ends early.
 */
export async function searchActiveListing(
  upstream: UpstreamClient,
  input: { eventId: bigint; ticketId: bigint } & Pick<UpstreamCallOptions, 'signal' | 'requestId'>,
): Promise<ListingSearchResult> {
  const search = new ListingSearch(input.eventId, input.ticketId);
  // The contract's largest page: the fewest round trips within the caller's time budget.
  for await (const page of upstream.walkActiveListings({
    eventId: input.eventId,
    limit: 1000,
    maxPages: LISTING_SEARCH_MAX_PAGES,
    signal: input.signal,
    requestId: input.requestId,
  })) {
    const listing = search.see(page.items);
    if (listing) return { kind: 'found', listing };
  }
  return search.complete();
}
