import { describe, expect, it } from 'vitest';
import type { ActiveListing, UpcomingEvent } from '../upstream/upstream.types';
import { SweepHold } from './sweep-hold';

const listing = (eventId: bigint | null, ticketId: bigint | null): ActiveListing => ({
  eventId,
  ticketId,
  askPriceMinor: 1n,
  raw: {},
});
const event = (eventId: bigint | null): UpcomingEvent => ({ eventId, name: 'n', startAt: 's', raw: {} });

describe(SweepHold.name, () => {
  it('holds the event of a null ticket_id and the ticket of a null event_id; items with both hold nothing', () => {
    const sut = new SweepHold();
    sut.note([listing(1n, 2n), listing(3n, null), listing(null, 4n)], false);
    expect({ all: sut.all, events: [...sut.events], tickets: [...sut.tickets] }).toEqual({
      all: false,
      events: ['3'],
      tickets: ['4'],
    });
  });

  it('holds everything for a listing with no identifier or an event without id', () => {
    const listings = new SweepHold();
    listings.note([listing(null, null)], false);
    expect(listings.all).toBe(true);
    const events = new SweepHold();
    events.note([event(5n), event(null)], true);
    expect(events.all).toBe(true);
  });

  it('holds nothing when every identifier is known', () => {
    const sut = new SweepHold();
    sut.note([listing(1n, 2n)], false);
    sut.note([event(1n)], true);
    expect({ all: sut.all, events: sut.events.size, tickets: sut.tickets.size }).toEqual({
      all: false,
      events: 0,
      tickets: 0,
    });
  });
});
