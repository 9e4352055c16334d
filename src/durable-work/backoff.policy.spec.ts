import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AppError } from '../common/app-error';
import { UpstreamError } from '../upstream/upstream.error';
import { backoffCeiling, backoffDelay, budgetExhausted, retryAfterOf } from './backoff.policy';

const settings = { baseMs: 100, maxMs: 1_000, retryAfterCapMs: 4_000 };
const settingsArb = fc.record({
  baseMs: fc.integer({ min: 1, max: 60_000 }),
  maxMs: fc.integer({ min: 1, max: 600_000 }),
  retryAfterCapMs: fc.integer({ min: 0, max: 10 ** 7 }),
});

describe(backoffDelay.name, () => {
  it('draws from 0..ceiling: a source at 0 waits nothing, one at 1 waits the ceiling', () => {
    expect(backoffDelay(settings, 2, 0, () => 0)).toBe(0);
    expect(backoffDelay(settings, 2, 0, () => 1)).toBe(400);
    expect(backoffDelay(settings, 2, 0, () => 0.5)).toBe(200);
  });

  it('honours a Retry-After above the draw, up to the cap', () => {
    expect(backoffDelay(settings, 0, 2_500, () => 0)).toBe(2_500);
    expect(backoffDelay(settings, 0, 60_000, () => 0)).toBe(4_000);
    expect(backoffDelay(settings, 5, 10, () => 1)).toBe(1_000);
  });

  it('never exceeds max(ceiling, capped Retry-After), never goes below the capped Retry-After', () => {
    fc.assert(
      fc.property(
        settingsArb,
        fc.nat(60),
        fc.nat(10 ** 8),
        fc.double({ min: 0, max: 1, noNaN: true }),
        (s, failures, asked, r) => {
          const sut = backoffDelay(s, failures, asked, () => r);
          const capped = Math.min(asked, s.retryAfterCapMs);
          expect(sut).toBeGreaterThanOrEqual(capped);
          expect(sut).toBeLessThanOrEqual(Math.max(backoffCeiling(s, failures), capped));
          expect(Number.isInteger(sut)).toBe(true);
        },
      ),
    );
  });
});

describe(backoffCeiling.name, () => {
  it('doubles per failure from the base and stops at the maximum', () => {
    expect([0, 1, 2, 3, 4, 50, -3].map((n) => backoffCeiling(settings, n))).toEqual([
      100, 200, 400, 800, 1_000, 1_000, 100,
    ]);
  });

  it('never decreases with more failures', () => {
    fc.assert(
      fc.property(settingsArb, fc.nat(100), fc.nat(100), (s, a, b) => {
        const [fewer, more] = [Math.min(a, b), Math.max(a, b)];
        expect(backoffCeiling(s, more)).toBeGreaterThanOrEqual(backoffCeiling(s, fewer));
      }),
    );
  });
});

describe(budgetExhausted.name, () => {
  it('is spent only once more than the budget has passed', () => {
    expect(budgetExhausted(1_000, 500, 1_500)).toBe(false);
    expect(budgetExhausted(1_000, 500, 1_501)).toBe(true);
  });
});

describe(retryAfterOf.name, () => {
  it('reads an upstream error’s milliseconds and a coded error’s seconds; nothing else asks', () => {
    const upstream = new UpstreamError({
      code: 'RATE_LIMITED',
      operation: 'submitTransaction',
      message: 'slow down',
      status: 429,
      attempts: 1,
      retryAfterMs: 1_500,
    });
    expect(retryAfterOf(upstream)).toBe(1_500);
    expect(retryAfterOf(new AppError('DATABASE_BUSY', 'busy', undefined, 2))).toBe(2_000);
    expect(retryAfterOf(new Error('plain'))).toBe(0);
    expect(retryAfterOf(undefined)).toBe(0);
  });
});
