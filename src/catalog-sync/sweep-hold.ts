import type { ActiveListing, UpcomingEvent } from '../upstream/upstream.types';

/**
 * What a pass's items with null identifiers keep its sweep from removing. The contract lets indexed identifiers
 * be null (2.7, 2.8 rule 2): such an item is skipped, never stored, so its row is not marked seen, yet it may be
 * a live row of the mirror. The sweep removes only rows none of them could be:
 * - a listing with `ticket_id` null holds every listing of its event;
 * - a listing with `event_id` null holds every listing with its ticket_id;
 * - an item with no identifier at all (an event without id; a listing with both null) holds everything.
 */
export class SweepHold {
  all = false;
  /** Event ids (decimal text) whose listings are held. */
  readonly events = new Set<string>();
  /** Ticket ids (decimal text) whose listings are held, in any event of the pass's scope. */
  readonly tickets = new Set<string>();

  /** Notes a page's items (only those with a null identifier hold anything). */
  note(items: readonly (ActiveListing | UpcomingEvent)[], isEvents: boolean): void {
    for (const item of items) {
      if (isEvents || !('ticketId' in item)) {
        if (item.eventId === null) this.all = true;
        continue;
      }
      if (item.eventId === null && item.ticketId === null) this.all = true;
      else if (item.ticketId === null) this.events.add(String(item.eventId));
      else if (item.eventId === null) this.tickets.add(item.ticketId.toString());
    }
  }
}
