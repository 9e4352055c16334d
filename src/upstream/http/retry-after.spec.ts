import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseRetryAfter } from './retry-after';

const NOW = Date.UTC(2026, 10, 21, 12, 0, 0);

describe(parseRetryAfter.name, () => {
  it('reads delay-seconds', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 10_000_000 }), (seconds) => {
        expect(parseRetryAfter(String(seconds), NOW)).toBe(seconds * 1000);
      }),
    );
  });

  it('reads an HTTP-date (IMF-fixdate) as the time until then', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 86_400 }), (seconds) => {
        const date = new Date(NOW + seconds * 1000).toUTCString();
        expect(parseRetryAfter(date, NOW)).toBe(seconds * 1000);
      }),
    );
  });

  it('reads the obsolete RFC 850 and asctime forms', () => {
    expect(parseRetryAfter('Saturday, 21-Nov-26 12:00:05 GMT', NOW)).toBe(5000);
    expect(parseRetryAfter('Sat Nov 21 12:00:07 2026', NOW)).toBe(7000);
  });

  it('treats a date in the past as "now"', () => {
    expect(parseRetryAfter(new Date(NOW - 60_000).toUTCString(), NOW)).toBe(0);
  });

  it.each([
    ['-1'],
    ['1.5'],
    ['soon'],
    ['1'.repeat(13)],
    [''],
    ['2026-11-21T12:00:00Z'],
    ['Sat, 21 Nov 2026'],
  ])('ignores %j (falls back to backoff)', (value) => {
    expect(parseRetryAfter(value, NOW)).toBeUndefined();
  });

  it('never returns a negative or non-finite delay for any input', () => {
    fc.assert(
      fc.property(fc.string(), (value) => {
        const ms = parseRetryAfter(value, NOW);
        expect(ms === undefined || (Number.isFinite(ms) && ms >= 0)).toBe(true);
      }),
    );
  });
});
