import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRfc3339 } from './rfc3339.validator';

describe('parseRfc3339', () => {
  it.each([
    ['2027-01-01T20:00:00Z', '2027-01-01T20:00:00.000Z'],
    ['2027-01-01t20:00:00z', '2027-01-01T20:00:00.000Z'],
    ['2027-01-01T20:00:00.123456789+02:00', '2027-01-01T18:00:00.123Z'],
    ['2024-02-29T00:00:00-00:30', '2024-02-29T00:30:00.000Z'],
    ['9999-12-31T23:59:59Z', '9999-12-31T23:59:59.000Z'],
  ])('%s is the instant %s', (text, iso) => {
    expect(parseRfc3339(text)).toBe(iso);
  });

  it.each([
    '2027-02-30T00:00:00Z',
    '2023-02-29T00:00:00Z',
    '2027-13-01T00:00:00Z',
    '2027-01-01T24:00:00Z',
    '2027-01-01T23:60:00Z',
    '2027-01-01T23:59:60Z',
    '2027-01-01T00:00:00',
    '2027-01-01 00:00:00Z',
    '2027-01-01T00:00:00+24:00',
    '0000-01-01T00:00:00Z',
    '0001-01-01T00:00:00+01:00',
    '9999-12-31T23:59:59-01:00',
    '1e3',
    '',
  ])('%j is refused', (text) => {
    expect(parseRfc3339(text)).toBeUndefined();
  });

  it('reads back every instant it prints (years 0001..9999)', () => {
    fc.assert(
      fc.property(
        fc.date({
          min: new Date('0001-01-01T00:00:00Z'),
          max: new Date('9999-12-31T23:59:59Z'),
          noInvalidDate: true,
        }),
        (d) => {
          expect(parseRfc3339(d.toISOString())).toBe(d.toISOString());
        },
      ),
    );
  });
});
