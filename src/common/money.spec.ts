import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { U64_MAX } from './int64';
import { formatMinor } from './money';

const u64 = fc.bigInt({ min: 0n, max: U64_MAX });
const decimals = fc.integer({ min: 0, max: 18 });

/** Reads the text back by hand: whole digits and fraction digits right-padded to `decimals`. */
function readBack(text: string, places: number): bigint {
  const [whole = '', fraction = ''] = text.split('.');
  return BigInt(whole + fraction.padEnd(places, '0'));
}

describe(formatMinor.name, () => {
  it.each([
    [1_500_000n, 6, '1.5'],
    [1_000_000n, 6, '1'],
    [0n, 6, '0'],
    [0n, 0, '0'],
    [1n, 6, '0.000001'],
    [10n, 6, '0.00001'],
    [123n, 0, '123'],
    [123n, 2, '1.23'],
    [120n, 2, '1.2'],
    [100n, 2, '1'],
    [5n, 18, '0.000000000000000005'],
    [U64_MAX, 0, '18446744073709551615'],
    [U64_MAX, 18, '18.446744073709551615'],
    [U64_MAX, 6, '18446744073709.551615'],
    [-1_500_000n, 6, '-1.5'],
  ])('formatMinor(%s, %s) = %s', (raw, places, expected) => {
    expect(formatMinor(raw, places)).toBe(expected);
  });

  it.each([-1, 19, 1.5, Number.NaN])('rejects %s decimals', (places) => {
    expect(() => formatMinor(1n, places)).toThrow(RangeError);
  });

  it('reads back to the same amount, in canonical form, over all u64 and decimals 0..18', () => {
    fc.assert(
      fc.property(u64, decimals, (raw, places) => {
        const sut = formatMinor(raw, places);
        expect(sut).toMatch(/^(0|[1-9]\d*)(\.\d*[1-9])?$/);
        const fraction = sut.split('.')[1] ?? '';
        expect(fraction.length).toBeLessThanOrEqual(places);
        expect(readBack(sut, places)).toBe(raw);
      }),
      { numRuns: 2000 },
    );
  });

  it('keeps the order of amounts (compared as decimals, by hand)', () => {
    fc.assert(
      fc.property(u64, u64, decimals, (a, b, places) => {
        const x = readBack(formatMinor(a, places), places);
        const y = readBack(formatMinor(b, places), places);
        expect([x < y, x === y]).toEqual([a < b, a === b]);
      }),
    );
  });

  it('has one integer digit per power of ten above the decimals', () => {
    fc.assert(
      fc.property(u64, decimals, (raw, places) => {
        const whole = formatMinor(raw, places).split('.')[0] ?? '';
        const digits = raw.toString().length;
        expect(whole.length).toBe(Math.max(1, digits - places));
      }),
    );
  });
});
