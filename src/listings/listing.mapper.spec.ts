import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { EventRow, ListingRow, MirrorState } from '../catalog-sync/catalog-mirror.types';
import { U64_MAX } from '../common/int64';
import {
  eventDetailView,
  eventView,
  freshness,
  listingDetailView,
  listingView,
  moneyView,
  olderAsOf,
  UNFORMATTED_REASON,
} from './listing.mapper';

const protocol = (decimals: number, mint: string | null = 'MINT') => ({
  stablecoinDecimals: decimals,
  stablecoinMint: mint,
  fetchedAt: new Date(0),
});

describe('moneyView', () => {
  it('is exact for every u64 and decimals 0..18: the amount reads back to the same integer', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.bigInt({ min: 0n, max: U64_MAX }), fc.constantFrom(0n, 1n, U64_MAX, 10n ** 18n)),
        fc.integer({ min: 0, max: 18 }),
        (minor, decimals) => {
          const view = moneyView(minor.toString(), protocol(decimals));
          expect(view.minor).toBe(minor.toString());
          expect(view.decimals).toBe(decimals);
          const [whole = '', fraction = ''] = (view.amount ?? '').split('.');
          expect(fraction.length).toBeLessThanOrEqual(decimals);
          expect(fraction.endsWith('0')).toBe(false);
          expect(BigInt(whole + fraction.padEnd(decimals, '0'))).toBe(minor);
        },
      ),
    );
  });

  it('formats the maximum u64', () => {
    expect(moneyView(U64_MAX.toString(), protocol(18)).amount).toBe('18.446744073709551615');
    expect(moneyView(U64_MAX.toString(), protocol(0)).amount).toBe('18446744073709551615');
    expect(moneyView('1500000', protocol(6)).amount).toBe('1.5');
  });

  it('carries minor only, and why, without a protocol config', () => {
    expect(moneyView('42', null)).toEqual({ minor: '42', unformatted_reason: UNFORMATTED_REASON });
  });

  it("prefers the listing's own mint over the protocol config's", () => {
    expect(moneyView('1', protocol(0, 'P'), 'L').currency_mint).toBe('L');
    expect(moneyView('1', protocol(0, 'P'), 7).currency_mint).toBe('P');
    expect(moneyView('1', protocol(0, null)).currency_mint).toBeNull();
  });
});

const state = (listingsAsOf: Date | null): MirrorState => ({
  generation: 1n,
  generationKey: 'e/1',
  eventsAsOf: null,
  listingsAsOf,
  eventsAsOfIso: null,
  listingsAsOfIso: listingsAsOf?.toISOString() ?? null,
  eventAsOf: new Map(),
  protocol: null,
  version: 'v',
});

describe('listingView', () => {
  const row: ListingRow = {
    event_id: '1',
    ticket_id: '2',
    ask_price_minor: '3',
    expires_at: null,
    raw: { seller: 42, event_id: '1' },
    first_seen_at: '2026-01-01T00:00:00.000Z',
    last_seen_at: '2026-01-02T00:00:00.000Z',
    removed_at: null,
    first_seen_key: '2026-01-01T00:00:00.000000Z',
  };

  it('says an active row was last seen by the last completed pass when that is later', () => {
    expect(listingView(row, state(new Date('2026-02-01T00:00:00Z'))).last_seen_at).toBe(
      '2026-02-01T00:00:00.000Z',
    );
    expect(listingView(row, state(new Date('2025-01-01T00:00:00Z'))).last_seen_at).toBe(
      '2026-01-02T00:00:00.000Z',
    );
    const removed = { ...row, removed_at: '2026-01-03T00:00:00.000Z' };
    expect(listingView(removed, state(new Date('2026-02-01T00:00:00Z'))).last_seen_at).toBe(
      '2026-01-02T00:00:00.000Z',
    );
  });

  it('keeps a non-string seller out of the typed field but in upstream_fields', () => {
    const view = listingView(row, state(null));
    expect(view.seller).toBeNull();
    expect(view.upstream_fields).toEqual(row.raw);
  });
});

/** An instant as the mirror's rows carry it (ISO 8601, milliseconds, UTC). */
const iso = fc
  .integer({ min: 1_600_000_000_000, max: 1_900_000_000_000 })
  .map((ms) => new Date(ms).toISOString());

describe('listingDetailView', () => {
  it("is listingView (as of the answer) then the answer's own fields, byte for byte once serialised", () => {
    fc.assert(
      fc.property(
        fc.record({
          ticket: fc.bigInt({ min: 0n, max: 2n ** 64n - 1n }),
          seller: fc.oneof(fc.string(), fc.integer(), fc.constant(null)),
          lastSeen: iso,
          removed: fc.option(iso),
          asOf: fc.option(iso),
          stale: fc.boolean(),
          live: fc.option(iso),
        }),
        ({ ticket, seller, lastSeen, removed, asOf, stale, live }) => {
          const row: ListingRow = {
            event_id: '7',
            ticket_id: ticket.toString(),
            ask_price_minor: '1500000',
            expires_at: null,
            raw: { seller, ticket_id: ticket.toString() },
            first_seen_at: '2026-01-01T00:00:00.000Z',
            last_seen_at: lastSeen,
            removed_at: removed,
            first_seen_key: '2026-01-01T00:00:00.000000Z',
          };
          const mirror = state(null);
          const sut = listingDetailView(row, mirror, { data_as_of: asOf, stale }, live);
          const spread = {
            ...listingView(row, mirror, asOf),
            checked_live_at: live,
            data_as_of: asOf,
            stale,
          };
          expect(JSON.stringify(sut)).toBe(JSON.stringify(spread));
        },
      ),
    );
  });
});

describe('eventDetailView', () => {
  it("is eventView then the answer's own fields, byte for byte once serialised", () => {
    fc.assert(
      fc.property(
        fc.record({
          name: fc.string(),
          startAt: fc.option(iso),
          lastSeen: iso,
          removed: fc.option(iso),
          active: fc.nat(),
          asOf: fc.option(iso),
          stale: fc.boolean(),
        }),
        ({ name, startAt, lastSeen, removed, active, asOf, stale }) => {
          const row: EventRow = {
            event_id: '7',
            name,
            start_at: startAt,
            start_at_raw: startAt ?? 'soon',
            start_key: null,
            first_seen_at: '2026-01-01T00:00:00.000Z',
            last_seen_at: lastSeen,
            removed_at: removed,
          };
          const mirror = state(asOf === null ? null : new Date(asOf));
          const summary = { active_listings: active, lowest_ask: moneyView('1', null), highest_ask: null };
          const sut = eventDetailView(row, mirror, summary, { data_as_of: asOf, stale });
          const spread = { ...eventView(row, mirror), listing_summary: summary, data_as_of: asOf, stale };
          expect(JSON.stringify(sut)).toBe(JSON.stringify(spread));
        },
      ),
    );
  });
});

describe('freshness', () => {
  it('is stale without a completed pass and past the threshold', () => {
    expect(freshness(null, 0, 10)).toEqual({ data_as_of: null, stale: true });
    expect(freshness(new Date(1000), 1010, 10).stale).toBe(false);
    expect(freshness(new Date(1000), 1011, 10).stale).toBe(true);
    expect(olderAsOf(new Date(1), new Date(2))).toEqual(new Date(1));
    expect(olderAsOf(null, new Date(2))).toBeNull();
  });
});
