import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { isoOf, isoOrNull, keyOf, laterIso } from './catalog-mirror.timestamps';

/** PostgreSQL's ISO text of a UTC wall time: fraction with trailing zeros dropped, none when zero. */
function pgText(epochMs: number, micros: number): string {
  const iso = new Date(epochMs).toISOString();
  const fraction = String(micros).padStart(6, '0').replace(/0+$/, '');
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction ? `.${fraction}` : ''}`;
}

const instant = fc.record({
  // Whole seconds in 0001..9999, and the microseconds within that second.
  seconds: fc.integer({ min: -62_135_596_800, max: 253_402_300_799 }),
  micros: fc.integer({ min: 0, max: 999_999 }),
});

describe(`${isoOf.name}, ${keyOf.name}, ${laterIso.name}`, () => {
  it("equals Date's toISOString and keeps microseconds in the key, for every 4-digit-year instant", () => {
    fc.assert(
      fc.property(instant, ({ seconds, micros }) => {
        const text = pgText(seconds * 1000, micros);
        const date = new Date(seconds * 1000 + Math.floor(micros / 1000));
        expect(isoOf(text)).toBe(date.toISOString());
        const key = keyOf(text);
        expect(key).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{6}Z$/);
        expect(key.slice(0, 19)).toBe(date.toISOString().slice(0, 19));
        expect(Number(key.slice(20, 26))).toBe(micros);
      }),
    );
  });

  it('reads the texts PostgreSQL writes: no fraction, short fractions, BC and 5-digit years', () => {
    expect(isoOf('2027-01-01 00:00:00')).toBe('2027-01-01T00:00:00.000Z');
    expect(isoOf('2027-01-01 00:00:00.5')).toBe('2027-01-01T00:00:00.500Z');
    expect(isoOf('2027-01-01 00:00:00.123999')).toBe('2027-01-01T00:00:00.123Z');
    expect(keyOf('2027-01-01 00:00:00.00012')).toBe('2027-01-01T00:00:00.000120Z');
    expect(isoOf('0001-01-01 00:00:00 BC')).toBe('0000-01-01T00:00:00.000Z');
    expect(isoOf('12345-06-07 08:09:10.25')).toBe('+012345-06-07T08:09:10.250Z');
    expect(isoOrNull(null)).toBeNull();
    expect(() => isoOf('Mon Jan 01 2027')).toThrow(/unexpected timestamp text/);
  });

  it('picks the later of two instants', () => {
    expect(laterIso('2026-01-02T00:00:00.000Z', '2026-01-01T00:00:00.000Z')).toBe('2026-01-02T00:00:00.000Z');
    expect(laterIso('2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.001Z')).toBe('2026-01-01T00:00:00.001Z');
    expect(laterIso('+012345-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z')).toBe(
      '+012345-01-01T00:00:00.000Z',
    );
    expect(laterIso('-000001-01-01T00:00:00.000Z', '0001-01-01T00:00:00.000Z')).toBe(
      '0001-01-01T00:00:00.000Z',
    );
  });
});
