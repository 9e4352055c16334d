import { AppError } from '../common/app-error';
import type { LiveListingObservation } from '../catalog-sync/catalog-mirror.types';
import { upstreamToAppError } from '../upstream/upstream-error.mapper';
import type { UpstreamClient } from '../upstream/upstream.client';
import { UpstreamError } from '../upstream/upstream.error';

/**
 * Re-reads one listing live: walks its event's active listings upstream (the contract has no
 * single-listing read) until the ticket appears or the walk ends, within `timeoutMs` overall (the
 * signal cancels the call in flight). A walk that ends without it is proof it is no longer active.
 * Upstream failures become the service's UPSTREAM_* errors (502/503/504), never a guess.
 */
export async function readLiveListing(
  upstream: UpstreamClient,
  eventId: bigint,
  ticketId: bigint,
  timeoutMs: number,
): Promise<LiveListingObservation> {
  const observedAt = new Date();
  const signal = AbortSignal.timeout(timeoutMs);
  try {
    // The contract's largest page: the fewest round trips within the time budget.
    for await (const page of upstream.walkActiveListings({ eventId, signal, limit: 1000 })) {
      const live = page.items.find((item) => item.eventId === eventId && item.ticketId === ticketId);
      if (live) return { eventId, ticketId, live, observedAt };
      if (signal.aborted) break;
    }
  } catch (error) {
    if (error instanceof UpstreamError) throw upstreamToAppError(error);
    throw error;
  }
  if (signal.aborted) {
    throw new AppError('UPSTREAM_TIMEOUT', 'The live re-read of the listing did not finish in time');
  }
  return { eventId, ticketId, live: null, observedAt };
}
