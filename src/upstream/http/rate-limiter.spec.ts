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
  it('lets a burst of one second through, then nothing more until that second has passed', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    for (let i = 0; i < 10; i++) await sut.acquire(Infinity);
    expect(clock.t).toBe(0);
    await sut.acquire(Infinity);
    expect(clock.t).toBe(1_050);
  });

  it('paces at the rate once the burst is spent', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    for (let i = 0; i < 10; i++) await sut.acquire(Infinity);
    clock.t = 1_050;
    for (let i = 0; i < 10; i++) await sut.acquire(Infinity);
    const t = clock.t;
    await sut.acquire(Infinity);
    await sut.acquire(Infinity);
    expect(clock.t).toBeGreaterThanOrEqual(t + 100);
  });

  it('never grants more than the rate within any one second, whatever the callers do (budget as counted upstream)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.oneof(
            { arbitrary: fc.constant(-1), weight: 1 },
            { arbitrary: fc.integer({ min: 0, max: 700 }), weight: 12 },
          ),
          { minLength: 1, maxLength: 80 },
        ),
        async (steps) => {
          const clock = fakeClock();
          const sut = new AdaptiveRateLimiter(options, clock);
          const grants: number[] = [];
          for (const step of steps) {
            if (step < 0) sut.onRateLimited(undefined);
            else {
              // Mostly at once (callers queued on the limiter), sometimes up to 200 ms apart.
              clock.t += Math.max(0, step - 500);
              await sut.acquire(Infinity);
              grants.push(clock.t);
            }
          }
          for (let i = 0; i < grants.length; i++) {
            const inSecond = grants.filter((g) => g >= grants[i] && g < grants[i] + 1_000).length;
            expect(inSecond).toBeLessThanOrEqual(options.maxRatePerSecond);
          }
        },
      ),
    );
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

  it('takes its share of the budget: max, floor and burst scale with it, a lowered rate keeps its fraction', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    sut.setShare(0.5);
    expect(sut.currentRate).toBe(5);
    for (let i = 0; i < 5; i++) await sut.acquire(Infinity);
    expect(clock.t).toBe(0);
    await sut.acquire(Infinity);
    expect(clock.t).toBe(1_050);
    for (let i = 0; i < 10; i++) sut.onRateLimited(undefined);
    expect(sut.currentRate).toBe(0.5);
    sut.setShare(1);
    expect(sut.currentRate).toBe(1);
    clock.t += 60_000;
    await sut.acquire(Infinity);
    expect(sut.currentRate).toBe(10);
  });

  it('tells its listeners of each own 429: the fraction of the maximum it lowered to and the pause', () => {
    const sut = new AdaptiveRateLimiter(options, fakeClock());
    const heard: unknown[] = [];
    const unsubscribe = sut.onThrottled((t) => heard.push(t));
    sut.onRateLimited(2_000);
    sut.onRateLimited(undefined);
    unsubscribe();
    sut.onRateLimited(undefined);
    expect(heard).toEqual([
      { factor: 0.5, pauseMs: 2_000 },
      { factor: 0.25, pauseMs: undefined },
    ]);
  });

  it("applies another replica's 429: lowered to its factor, recovered by its age, and paused for what is left", async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    sut.setShare(0.5);
    const heard: unknown[] = [];
    sut.onThrottled((t) => heard.push(t));
    // Lowered to a quarter 2.5 s ago: two recovery steps of 10 % since → 45 % of this replica's maximum.
    sut.applyShared({ factor: 0.25, ageMs: 2_500, pauseMs: 1_500 });
    expect(sut.currentRate).toBeCloseTo(2.25);
    await sut.acquire(Infinity);
    expect(clock.t).toBe(1_500);
    // Recovering in step with the replica that got the 429: a step at each 1 s of the row's age (3 s, 4 s…).
    expect(sut.currentRate).toBeCloseTo(3.25);
    // Applying the same row again (every heartbeat reads it) changes nothing; nor does a milder one.
    sut.applyShared({ factor: 0.25, ageMs: 2_500 + clock.t, pauseMs: 0 });
    sut.applyShared({ factor: 0.9, ageMs: 100, pauseMs: 0 });
    expect(sut.currentRate).toBeCloseTo(3.25);
    clock.t += 999;
    await sut.acquire(Infinity);
    expect(sut.currentRate).toBeCloseTo(3.25);
    clock.t += 1;
    await sut.acquire(Infinity);
    expect(sut.currentRate).toBeCloseTo(3.75);
    // Never below the floor, never above the maximum, never re-published as this replica's own 429.
    sut.applyShared({ factor: 0.001, ageMs: 0, pauseMs: 0 });
    expect(sut.currentRate).toBe(0.5);
    sut.applyShared({ factor: 1, ageMs: 0, pauseMs: 0 });
    expect(sut.currentRate).toBe(0.5);
    expect(heard).toEqual([]);
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
