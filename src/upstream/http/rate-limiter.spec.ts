import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdaptiveRateLimiter, RateLimitWaitTooLong } from './rate-limiter';
import type { UpstreamClock } from './clock';

function fakeClock(): UpstreamClock & { t: number } {
  const clock = {
    t: 0,
    now: () => clock.t,
    sleep: async (ms: number) => {
      clock.t += ms;
      await Promise.resolve();
    },
  };
  return clock;
}

const options = { maxRatePerSecond: 10, minRatePerSecond: 1, recoveryIntervalMs: 1_000, recoveryStep: 0.1 };

describe(AdaptiveRateLimiter.name, () => {
  it('lets a burst of one second through, then paces at the rate', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    for (let i = 0; i < 10; i++) await sut.acquire(Infinity);
    expect(clock.t).toBe(0);
    await sut.acquire(Infinity);
    expect(clock.t).toBe(100);
  });

  it('halves the rate on each 429 down to the floor, and recovers slowly', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    sut.onRateLimited(undefined);
    expect(sut.currentRate).toBe(5);
    for (let i = 0; i < 10; i++) sut.onRateLimited(undefined);
    expect(sut.currentRate).toBe(1);
    clock.t += 3_000;
    await sut.acquire(Infinity);
    expect(sut.currentRate).toBeCloseTo(4);
    clock.t += 60_000;
    await sut.acquire(Infinity);
    expect(sut.currentRate).toBe(10);
  });

  it('pauses every caller for Retry-After', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    sut.onRateLimited(2_000);
    await sut.acquire(Infinity);
    expect(clock.t).toBeGreaterThanOrEqual(2_000);
  });

  it('refuses a wait that would pass the deadline', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    sut.onRateLimited(5_000);
    await expect(sut.acquire(1_000)).rejects.toBeInstanceOf(RateLimitWaitTooLong);
  });

  it('keeps the rate within [floor, max] under any sequence of 429s and quiet periods', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constant(-1), fc.integer({ min: 0, max: 10_000 })), { maxLength: 40 }),
        async (steps) => {
          const clock = fakeClock();
          const sut = new AdaptiveRateLimiter(options, clock);
          for (const step of steps) {
            if (step < 0) sut.onRateLimited(undefined);
            else {
              clock.t += step;
              await sut.acquire(Infinity);
            }
            expect(sut.currentRate).toBeGreaterThanOrEqual(1);
            expect(sut.currentRate).toBeLessThanOrEqual(10);
          }
        },
      ),
    );
  });
});
