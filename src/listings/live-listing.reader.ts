import { setTimeout as sleep } from 'node:timers/promises';
import { AppError } from '../common/app-error';
import type { LiveListingObservation } from '../catalog-sync/catalog-mirror.types';
import { backoffDelay, type BackoffSettings } from '../durable-work/backoff.policy';
import { searchActiveListing } from '../upstream/listing-search';
import { upstreamToAppError } from '../upstream/upstream-error.mapper';
import type { UpstreamClient } from '../upstream/upstream.client';
import { UpstreamError } from '../upstream/upstream.error';

/**
 * Walks one read makes at most when items with null identifiers keep it from telling whether the listing is
 * live, all within the read's one time budget (listed in listings.retries.ts, docs/RETRIES.md).
 */
export const FRESH_READ_MAX_WALKS = 3;
/** The one backoff policy between those walks: short, the caller is waiting. */
const FRESH_BACKOFF: BackoffSettings = { baseMs: 50, maxMs: 500, retryAfterCapMs: 0 };

/**
 * Re-reads one listing live: walks its event's active listings upstream (the contract has no single-listing
 * read) until the ticket appears or the walk ends, within `timeoutMs` overall (the signal cancels the call in
 * flight). Only a complete walk in which no item could be the listing proves it no longer active: when items
 * with null identifiers could be it, the walk is made again (at most FRESH_READ_MAX_WALKS), then the read
 * fails UPSTREAM_UNAVAILABLE rather than call a live listing gone. Upstream failures become the service's
 * UPSTREAM_* errors (502/503/504), never a guess. `observedAt` is the database clock's time before the walk
 * (DatabaseClock): the stamp the mirror's stale-write guard compares with sync passes of every replica.
 */
export async function readLiveListing(
  upstream: UpstreamClient,
  eventId: bigint,
  ticketId: bigint,
  timeoutMs: number,
  observedAt: Date,
): Promise<LiveListingObservation> {
  const signal = AbortSignal.timeout(timeoutMs);
  let maybe = 0;
  try {
    for (let walk = 0; walk < FRESH_READ_MAX_WALKS; walk++) {
      if (walk > 0) await sleep(backoffDelay(FRESH_BACKOFF, walk - 1), undefined, { signal });
      const search = await searchActiveListing(upstream, { eventId, ticketId, signal });
      if (search.kind === 'found') return { eventId, ticketId, live: search.listing, observedAt };
      if (search.kind === 'absent') return { eventId, ticketId, live: null, observedAt };
      maybe = search.maybe;
    }
  } catch (error) {
    if (error instanceof UpstreamError) throw upstreamToAppError(error);
    if (signal.aborted)
      throw new AppError('UPSTREAM_TIMEOUT', 'The live re-read of the listing did not finish in time');
    throw error;
  }
  throw new AppError(
    'UPSTREAM_UNAVAILABLE',
    `The live re-read could not find or rule out the listing: ${maybe} item(s) of its event came back ` +
      'with a null identifier',
  );
}
