import type { EventRow, ListingRow } from '../catalog-sync/catalog-mirror.types';
import { AppError } from '../common/app-error';

/** Never mirrored (or not an event the upstream ever listed). */
export function eventNotFound(): AppError {
  return new AppError('NOT_FOUND', 'Event not found');
}

export function listingNotFound(): AppError {
  return new AppError('NOT_FOUND', 'Listing not found');
}

/**
 * Mirrored once, removed since (a completed pass or a live re-read no longer saw it): 410 with when it
 * was last seen, so a page can say "sold or withdrawn" instead of "never existed".
 */
export function eventGone(row: EventRow): AppError {
  return new AppError('GONE', 'Event is no longer listed upstream', {
    event_id: row.event_id,
    last_seen_at: row.last_seen_at,
    removed_at: row.removed_at,
  });
}

export function listingGone(row: ListingRow, checkedLiveAt: Date | null = null): AppError {
  return new AppError('GONE', 'Listing is no longer active', {
    event_id: row.event_id,
    ticket_id: row.ticket_id,
    last_seen_at: row.last_seen_at,
    removed_at: row.removed_at,
    checked_live_at: checkedLiveAt?.toISOString() ?? null,
  });
}
