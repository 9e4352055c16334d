import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { UnsafeJsonInteger } from '../upstream/wire/safe-json';
import type { ActiveListing, UpcomingEvent } from '../upstream/upstream.types';
import { listingKey, mapEvent, mapListing, mapPage, parseI64, parseStartAt } from './catalog-sync.mapper';

const U64_MAX = 2n ** 64n - 1n;
const u64 = fc.bigInt({ min: 0n, max: U64_MAX });
const maybeId = fc.option(u64, { nil: null });
const extra = fc.dictionary(
  fc.string({ minLength: 1, maxLength: 8 }).filter((k) => !['event_id', 'ticket_id'].includes(k)),
  fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)),
  { maxKeys: 4 },
);

const listingArb = fc
  .record({ eventId: maybeId, ticketId: maybeId, askPriceMinor: u64, extra })
  .map(({ eventId, ticketId, askPriceMinor, extra: more }): ActiveListing => ({
    eventId,
    ticketId,
    askPriceMinor,
    raw: {
      ...more,
      // As the upstream may send them: a JSON integer when safe, else a decimal string (or null).
      event_id: eventId === null ? null : eventId <= 2n ** 53n - 1n ? Number(eventId) : eventId.toString(),
      ticket_id: ticketId?.toString() ?? null,
      ask_price_minor: askPriceMinor.toString(),
    },
  }));

describe(mapListing.name, () => {
  it('maps every listing with both identifiers to a row with exact u64 values and skips the others', () => {
    fc.assert(
      fc.property(listingArb, (item) => {
        const sut = mapListing(item);
        const { eventId, ticketId, askPriceMinor } = item;
        const expectedRaw = JSON.stringify({
          ...item.raw,
          event_id: eventId?.toString(),
          ticket_id: ticketId?.toString(),
          ask_price_minor: askPriceMinor.toString(),
        });
        // Identifiers and price are decimal strings in raw whichever way they arrived.
        const rawMatcher = expect.toSatisfy(
          (text: string) => JSON.stringify(JSON.parse(text)) === expectedRaw,
        );
        const expected =
          eventId === null
            ? { ok: false, reason: 'event_id missing or null' }
            : ticketId === null
              ? { ok: false, reason: 'ticket_id missing or null' }
              : {
                  ok: true,
                  row: {
                    eventId,
                    ticketId,
                    askPriceMinor,
                    expiresAt: null,
                    raw: rawMatcher,
                  },
                };
        expect(sut).toEqual(expected);
      }),
    );
  });

  it('names the missing identifier when it skips', () => {
    const base = { askPriceMinor: 1n, raw: {} };
    expect(mapListing({ ...base, eventId: null, ticketId: 1n })).toEqual({
      ok: false,
      reason: 'event_id missing or null',
    });
    expect(mapListing({ ...base, eventId: 1n, ticketId: null })).toEqual({
      ok: false,
      reason: 'ticket_id missing or null',
    });
  });

  it('keeps unsafe integers of unknown fields as their digits and refuses text jsonb cannot store', () => {
    const item: ActiveListing = {
      eventId: U64_MAX,
      ticketId: 2n ** 53n + 1n,
      askPriceMinor: U64_MAX,
      raw: { big: new UnsafeJsonInteger('123456789012345678901'), permit_version: 7, expires_at: -5 },
    };
    const sut = mapListing(item);
    expect(sut.ok ? JSON.parse(sut.row.raw) : sut).toMatchObject({
      big: '123456789012345678901',
      event_id: '18446744073709551615',
      ticket_id: '9007199254740993',
      permit_version: '7',
      expires_at: '-5',
    });
    expect(sut.ok ? sut.row.expiresAt : sut).toBe(-5n);
    expect(mapListing({ ...item, raw: { note: 'a\u0000b' } })).toEqual({
      ok: false,
      reason: 'unstorable text',
    });
  });
});

describe(mapEvent.name, () => {
  const eventArb = fc
    .record({ eventId: maybeId, name: fc.string(), startAt: fc.string() })
    .map((e): UpcomingEvent => ({ ...e, raw: { event_id: e.eventId?.toString() ?? null, name: e.name } }));

  it('maps an event with an id, skips one without, never invents a key', () => {
    fc.assert(
      fc.property(eventArb, (item) => {
        const storable = !`${item.name}${item.startAt}`.includes('\u0000');
        const rowMatcher = expect.objectContaining({ eventId: item.eventId, startAtRaw: item.startAt });
        const expected =
          item.eventId === null
            ? { ok: false, reason: 'event_id missing or null' }
            : storable
              ? { ok: true, row: rowMatcher }
              : { ok: false, reason: 'unstorable text' };
        expect(mapEvent(item)).toEqual(expected);
      }),
    );
  });
});

describe(parseStartAt.name, () => {
  it('parses RFC 3339 instants and leaves anything else null', () => {
    expect(parseStartAt('2026-11-22T18:00:00Z')?.toISOString()).toBe('2026-11-22T18:00:00.000Z');
    expect(parseStartAt('2026-11-22T18:00:00.5+02:00')?.toISOString()).toBe('2026-11-22T16:00:00.500Z');
    expect(parseStartAt('tomorrow')).toBeNull();
    expect(parseStartAt('2026-13-45T99:00:00Z')).toBeNull();
  });
});

describe(parseI64.name, () => {
  it('accepts i64 decimal strings and safe integers only', () => {
    expect(parseI64('-9223372036854775808')).toBe(-(2n ** 63n));
    expect(parseI64('9223372036854775808')).toBeNull();
    expect(parseI64(12)).toBe(12n);
    expect(parseI64(1.5)).toBeNull();
    expect(parseI64('01')).toBeNull();
  });
});

describe(mapPage.name, () => {
  it('counts skips per reason and keeps one row per key, the last occurrence', () => {
    fc.assert(
      fc.property(fc.array(listingArb, { maxLength: 40 }), (items) => {
        const sut = mapPage(items, mapListing, listingKey);
        const valid = items.filter((i) => i.eventId !== null && i.ticketId !== null);
        expect(sut.skippedCount).toBe(items.length - valid.length);
        const keys = new Set(valid.map((i) => `${i.eventId}:${i.ticketId}`));
        expect(sut.rows.map(listingKey).sort()).toEqual([...keys].sort());
        for (const row of sut.rows) {
          const last = valid.findLast((i) => i.eventId === row.eventId && i.ticketId === row.ticketId);
          expect(row.askPriceMinor).toBe(last?.askPriceMinor);
        }
      }),
    );
  });
});
