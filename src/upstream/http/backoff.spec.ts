import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { fullJitterDelay } from './backoff';

describe(fullJitterDelay.name, () => {
  it('stays within [0, min(cap, base·2^(attempt-1))] for every attempt and random draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 100 }),
        fc.integer({ min: 1, max: 60_000 }),
        fc.integer({ min: 1, max: 300_000 }),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        (attempt, base, cap, r) => {
          const delay = fullJitterDelay(attempt, base, cap, () => r);
          expect(delay).toBeGreaterThanOrEqual(0);
          expect(delay).toBeLessThanOrEqual(Math.min(cap, base * 2 ** Math.min(attempt - 1, 30)));
          expect(Number.isInteger(delay)).toBe(true);
        },
      ),
    );
  });

  it('grows exponentially until the cap', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => fullJitterDelay(attempt, 100, 1_000, () => 0.999999))).toEqual([
      99, 199, 399, 799, 999,
    ]);
  });

  it('survives a misbehaving random source', () => {
    expect(fullJitterDelay(3, 100, 1_000, () => 7)).toBe(400);
    expect(fullJitterDelay(3, 100, 1_000, () => -1)).toBe(0);
  });
});
