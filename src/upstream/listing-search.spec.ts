import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ListingSearch, matchItem, type ListingSearchResult } from './listing-search';
import type { ActiveListing } from './upstream.types';

// A small id space, so items often share an identifier with the listing searched for.
const id = fc.bigInt({ min: 1n, max: 4n });
const maybeId = fc.option(id, { nil: null });
const item = fc
  .record({ eventId: maybeId, ticketId: maybeId })
  .map(({ eventId, ticketId }): ActiveListing => ({ eventId, ticketId, askPriceMinor: 1n, raw: {} }));
/** A walk: its items split into pages anywhere (empty pages included, as the contract allows). */
const walk = fc.array(fc.array(item, { maxLength: 5 }), { maxLength: 5 });

/** Whether some value of its null identifiers would make the item the listing (the contract's "can be null"). */
const couldBe = (i: ActiveListing, e: bigint, t: bigint): boolean =>
  (i.eventId ?? e) === e && (i.ticketId ?? t) === t;

function run(pages: ActiveListing[][], e: bigint, t: bigint): ListingSearchResult {
  const sut = new ListingSearch(e, t);
  for (const page of pages) {
    const listing = sut.see(page);
    if (listing) return { kind: 'found', listing };
  }
  return sut.complete();
}

describe(ListingSearch.name, () => {
  it('finds the first item with both identifiers equal; absent only when no item could be the listing', () => {
    fc.assert(
      fc.property(walk, id, id, (pages, e, t) => {
        const items = pages.flat();
        const exact = items.find((i) => i.eventId === e && i.ticketId === t);
        const maybe = items.filter((i) => couldBe(i, e, t)).length;
        const expected: ListingSearchResult = exact
          ? { kind: 'found', listing: exact }
          : maybe > 0
            ? { kind: 'undecided', maybe }
            : { kind: 'absent' };
        expect(run(pages, e, t)).toEqual(expected);
      }),
    );
  });

  it('does not depend on where the pages break', () => {
    fc.assert(
      fc.property(walk, id, id, (pages, e, t) => {
        expect(run(pages, e, t)).toEqual(run([pages.flat()], e, t));
      }),
    );
  });

  it('counts the items that could be the listing', () => {
    const e = 7n;
    const t = 9n;
    const items: ActiveListing[] = [
      { eventId: e, ticketId: null, askPriceMinor: 1n, raw: {} },
      { eventId: null, ticketId: t, askPriceMinor: 1n, raw: {} },
      { eventId: null, ticketId: null, askPriceMinor: 1n, raw: {} },
      { eventId: null, ticketId: 8n, askPriceMinor: 1n, raw: {} },
      { eventId: 6n, ticketId: null, askPriceMinor: 1n, raw: {} },
    ];
    expect(run([items], e, t)).toEqual({ kind: 'undecided', maybe: 3 });
    expect(run([], e, t)).toEqual({ kind: 'absent' });
  });
});

describe(matchItem.name, () => {
  it('is `other` exactly when a known identifier differs', () => {
    fc.assert(
      fc.property(maybeId, maybeId, id, id, (eventId, ticketId, e, t) => {
        const sut = matchItem({ eventId, ticketId }, e, t);
        const differs = (eventId !== null && eventId !== e) || (ticketId !== null && ticketId !== t);
        expect(sut).toBe(differs ? 'other' : eventId === null || ticketId === null ? 'maybe' : 'match');
      }),
    );
  });
});
