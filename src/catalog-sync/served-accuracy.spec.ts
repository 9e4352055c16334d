import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ListingRow } from './catalog-mirror.types';
import { AccuracyWindow, sampleVerdict, ServedReservoir } from './served-accuracy';
import { listingRow } from '../../test/support/listing-row';

const row = (eventId: number, ticketId: number, price = '100'): ListingRow =>
  listingRow(String(eventId), String(ticketId), price);

describe(ServedReservoir.name, () => {
  it('keeps at most its capacity, dropping the least recently served', () => {
    const sut = new ServedReservoir(3);
    sut.note([row(1, 1), row(1, 2), row(1, 3)], 10);
    sut.note([row(1, 1)], 20); // served again: now the newest
    sut.note([row(1, 4)], 30); // 1:2 is the oldest and leaves
    expect(sut.size).toBe(3);
    const taken = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const t = sut.take(0, () => 0);
      if (t) taken.add(`${t.eventId}:${t.ticketId}`);
    }
    expect([...taken].sort()).toEqual(['1:1', '1:3', '1:4']);
    expect(sut.take(0)).toBeUndefined();
  });

  it('draws only listings served at or after `since`, with the price served last', () => {
    const sut = new ServedReservoir(10);
    sut.note([row(1, 1, '100'), row(1, 2, '200')], 10);
    sut.note([row(1, 2, '250')], 50);
    expect(sut.take(40, () => 0.99)).toEqual({
      eventId: '1',
      ticketId: '2',
      priceMinor: '250',
      servedAt: 50,
    });
    // 1:1 was served before 40: nothing recent is left.
    expect(sut.take(40, () => 0)).toBeUndefined();
    expect(sut.take(0, () => 0)?.ticketId).toBe('1');
  });

  it('never holds more than its capacity and draws each recent listing with some random value', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 20 }),
        fc.array(fc.array(fc.tuple(fc.nat(5), fc.nat(20)), { maxLength: 10 }), { maxLength: 20 }),
        (capacity, batches) => {
          const sut = new ServedReservoir(capacity);
          batches.forEach((batch, i) =>
            sut.note(
              batch.map(([e, t]) => row(e, t)),
              i,
            ),
          );
          const distinct = new Set(batches.flat().map(([e, t]) => `${e}:${t}`)).size;
          expect(sut.size).toBe(Math.min(capacity, distinct));
          let drawn = 0;
          while (sut.take(0, Math.random)) drawn++;
          expect(drawn).toBe(Math.min(capacity, distinct));
        },
      ),
    );
  });

  it('refuses a capacity that is not a positive integer', () => {
    expect(() => new ServedReservoir(0)).toThrow('capacity must be a positive integer');
  });
});

describe(AccuracyWindow.name, () => {
  it('is null before the first sample, then the buyable share of the last `size` samples', () => {
    const sut = new AccuracyWindow(4);
    expect(sut.accuracy).toBeNull();
    sut.add('buyable');
    sut.add('gone');
    expect(sut.accuracy).toBe(0.5);
    sut.add('buyable');
    sut.add('buyable');
    expect(sut.accuracy).toBe(0.75);
    sut.add('repriced'); // pushes out the first buyable
    expect(sut.count).toBe(4);
    expect(sut.accuracy).toBe(0.5);
  });

  it('equals the share computed from the last `size` verdicts, whatever the sequence', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 10 }),
        fc.array(fc.constantFrom('buyable' as const, 'gone' as const, 'repriced' as const), {
          minLength: 1,
          maxLength: 50,
        }),
        (size, verdicts) => {
          const sut = new AccuracyWindow(size);
          for (const v of verdicts) sut.add(v);
          const last = verdicts.slice(-size);
          expect(sut.count).toBe(last.length);
          expect(sut.accuracy).toBeCloseTo(last.filter((v) => v === 'buyable').length / last.length, 12);
        },
      ),
    );
  });
});

describe(sampleVerdict.name, () => {
  it('buyable only when still active at the exact served price (u64, beyond 2^53)', () => {
    expect(sampleVerdict('18446744073709551615', 18446744073709551615n)).toBe('buyable');
    expect(sampleVerdict('18446744073709551615', 18446744073709551614n)).toBe('repriced');
    expect(sampleVerdict('100', null)).toBe('gone');
  });
});
