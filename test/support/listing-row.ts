import type { ListingRow } from '../../src/catalog-sync/catalog-mirror.types';

/** A mirror row for unit specs: active, first and last seen at the start of 2026, no raw fields. */
export function listingRow(eventId: string, ticketId: string, askPriceMinor = '1'): ListingRow {
  return {
    event_id: eventId,
    ticket_id: ticketId,
    ask_price_minor: askPriceMinor,
    expires_at: null,
    raw: {},
    first_seen_at: '2026-01-01T00:00:00.000Z',
    last_seen_at: '2026-01-01T00:00:00.000Z',
    removed_at: null,
    first_seen_key: '2026-01-01T00:00:00.000000Z',
  };
}
