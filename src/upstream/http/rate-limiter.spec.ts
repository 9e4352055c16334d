import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AdaptiveRateLimiter, RateLimitWaitTooLong, type WireGrant } from './rate-limiter';
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

/** A grant whose request is written at once (grant time = wire time). */
async function take(sut: AdaptiveRateLimiter, deadline = Infinity): Promise<void> {
  (await sut.acquire(deadline)).written();
}

/** Lets every pending promise callback run (setImmediate comes after the microtask queue drains). */
const settleCallbacks = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Virtual time with real concurrency: `sleep` parks its caller until `run` has moved the clock to its time, and
 * `at` schedules test events (a request arriving, a grant written) on the same timeline.
 */
class VirtualTime implements UpstreamClock {
  t = 0;
  private readonly timers: { at: number; seq: number; fire: () => void }[] = [];
  private seq = 0;

  readonly now = (): number => this.t;

  readonly sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      this.at(this.t + ms, resolve);
    });

  at(time: number, fire: () => void): void {
    this.timers.push({ at: time, seq: this.seq++, fire });
  }

  /** Lets every caller run as far as it can, then moves to the earliest timer; until no timer is left. */
  async run(maxSteps = 100_000): Promise<void> {
    for (let step = 0; step < maxSteps; step++) {
      await settleCallbacks();
      if (this.timers.length === 0) return;
      let next = 0;
      for (let i = 1; i < this.timers.length; i++) {
        const [a, b] = [this.timers[i], this.timers[next]];
        if (a.at < b.at || (a.at === b.at && a.seq < b.seq)) next = i;
      }
      const [timer] = this.timers.splice(next, 1);
      this.t = Math.max(this.t, timer.at);
      timer.fire();
    }
    throw new Error('virtual time did not settle');
  }
}

/** The most times within any half-open window [t, t + ms). */
function busiest(times: readonly number[], ms: number): number {
  const sorted = [...times].sort((x, y) => x - y);
  let best = 0;
  for (let i = 0, j = 0; j < sorted.length; j++) {
    while (sorted[j] - sorted[i] >= ms) i++;
    best = Math.max(best, j - i + 1);
  }
  return best;
}

describe(AdaptiveRateLimiter.name, () => {
  it('lets a burst of one second through, then nothing more until that second has passed', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    for (let i = 0; i < 10; i++) await take(sut);
    expect(clock.t).toBe(0);
    await take(sut);
    expect(clock.t).toBe(1_050);
  });

  it('paces at the rate once the burst is spent', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    for (let i = 0; i < 10; i++) await take(sut);
    clock.t = 1_050;
    for (let i = 0; i < 10; i++) await take(sut);
    const t = clock.t;
    await take(sut);
    await take(sut);
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
              await take(sut);
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

  it('counts a request when it is written, not when it was granted', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    const grants: WireGrant[] = [];
    for (let i = 0; i < 10; i++) grants.push(await sut.acquire(Infinity));
    // The ten leave late (queued behind other calls): the upstream counts them at 900.
    clock.t = 900;
    for (const grant of grants) grant.written();
    clock.t = 1_050;
    await take(sut);
    expect(clock.t).toBe(900 + 1_050);
  });

  it('holds a pending grant as written now until it settles; one handed back frees its place at once', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    const grants: WireGrant[] = [];
    for (let i = 0; i < 10; i++) grants.push(await sut.acquire(Infinity));
    // Long after the grants: the bucket is full again, but the ten may still be written any moment.
    clock.t = 5_000;
    let granted = false;
    const next = sut.acquire(Infinity).then((grant) => {
      granted = true;
      return grant;
    });
    await settleCallbacks();
    expect(granted).toBe(false);
    grants[0].unsent();
    (await next).written();
    expect(clock.t).toBe(5_000);
    expect(sut.pendingGrants).toBe(9);
    // Written now: the nine and the one just taken fill the window until 5 000 + 1 050.
    for (const grant of grants.slice(1)) grant.written();
    await take(sut);
    expect(clock.t).toBe(5_000 + 1_050);
  });

  it('counts a grant once, whatever its attempt reports after the first', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    const grant = await sut.acquire(Infinity);
    grant.written();
    grant.written();
    grant.unsent();
    expect(sut.pendingGrants).toBe(0);
    for (let i = 0; i < 9; i++) await take(sut);
    expect(clock.t).toBe(0);
    await take(sut);
    expect(clock.t).toBe(1_050);
  });

  it('a caller held by pending grants stops at its signal, or at its deadline', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    const grants: WireGrant[] = [];
    for (let i = 0; i < 10; i++) grants.push(await sut.acquire(Infinity));
    const caller = new AbortController();
    const cancelled = sut.acquire(Infinity, caller.signal);
    const late = sut.acquire(500);
    caller.abort(new Error('caller gone'));
    await expect(cancelled).rejects.toThrow('caller gone');
    await expect(late).rejects.toBeInstanceOf(RateLimitWaitTooLong);
    expect(clock.t).toBe(500);
    clock.t = 600;
    grants[0].unsent();
    // Neither took the place given back.
    expect(sut.pendingGrants).toBe(9);
    await take(sut);
    expect(clock.t).toBe(600);
  });

  it('no window of one second holds more written requests than the budget, whatever the grant → wire delays', async () => {
    const request = fc.record({
      // Mostly together (callers queued on the limiter), sometimes spread out.
      gap: fc.oneof({ arbitrary: fc.constant(0), weight: 3 }, fc.integer({ min: 0, max: 400 })),
      // Mostly at once, sometimes queued in the bulkhead or connecting for up to 1.5 s.
      delay: fc.oneof(
        { arbitrary: fc.integer({ min: 0, max: 5 }), weight: 3 },
        fc.integer({ min: 0, max: 1_500 }),
      ),
      unsent: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      throttled: fc.oneof(
        { arbitrary: fc.constant(undefined), weight: 12 },
        fc.constant(null),
        fc.integer({ min: 1, max: 1_500 }),
      ),
    });
    await fc.assert(
      fc.asyncProperty(
        fc.array(request, { minLength: 1, maxLength: 60 }),
        fc.constantFrom(1, 0.5, 0.3),
        async (requests, share) => {
          const clock = new VirtualTime();
          const sut = new AdaptiveRateLimiter(options, clock);
          sut.setShare(share);
          const budget = Math.floor(options.maxRatePerSecond * share);
          const wire: number[] = [];
          const failures: unknown[] = [];
          let granted = 0;
          let arrival = 0;
          for (const { gap, delay, unsent, throttled } of requests) {
            arrival += gap;
            clock.at(arrival, () => {
              if (throttled !== undefined) sut.onRateLimited(throttled ?? undefined);
              sut.acquire(Infinity).then(
                (grant) => {
                  granted++;
                  clock.at(clock.t + delay, () => {
                    if (unsent) return grant.unsent();
                    grant.written();
                    wire.push(clock.t);
                  });
                },
                (error: unknown) => failures.push(error),
              );
            });
          }
          await clock.run();
          expect(failures).toEqual([]);
          expect(granted).toBe(requests.length);
          expect(sut.pendingGrants).toBe(0);
          expect(busiest(wire, 1_000)).toBeLessThanOrEqual(budget);
        },
      ),
      { numRuns: 150 },
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
    await take(sut);
    expect(sut.currentRate).toBeCloseTo(4);
    clock.t += 60_000;
    await take(sut);
    expect(sut.currentRate).toBe(10);
  });

  it('pauses every caller for Retry-After', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    sut.onRateLimited(2_000);
    await take(sut);
    expect(clock.t).toBeGreaterThanOrEqual(2_000);
  });

  it('refuses a wait that would pass the deadline', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    sut.onRateLimited(5_000);
    await expect(take(sut, 1_000)).rejects.toBeInstanceOf(RateLimitWaitTooLong);
  });

  it('takes its share of the budget: max, floor and burst scale with it, a lowered rate keeps its fraction', async () => {
    const clock = fakeClock();
    const sut = new AdaptiveRateLimiter(options, clock);
    sut.setShare(0.5);
    expect(sut.currentRate).toBe(5);
    for (let i = 0; i < 5; i++) await take(sut);
    expect(clock.t).toBe(0);
    await take(sut);
    expect(clock.t).toBe(1_050);
    for (let i = 0; i < 10; i++) sut.onRateLimited(undefined);
    expect(sut.currentRate).toBe(0.5);
    sut.setShare(1);
    expect(sut.currentRate).toBe(1);
    clock.t += 60_000;
    await take(sut);
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
    await take(sut);
    expect(clock.t).toBe(1_500);
    // Recovering in step with the replica that got the 429: a step at each 1 s of the row's age (3 s, 4 s…).
    expect(sut.currentRate).toBeCloseTo(3.25);
    // Applying the same row again (every heartbeat reads it) changes nothing; nor does a milder one.
    sut.applyShared({ factor: 0.25, ageMs: 2_500 + clock.t, pauseMs: 0 });
    sut.applyShared({ factor: 0.9, ageMs: 100, pauseMs: 0 });
    expect(sut.currentRate).toBeCloseTo(3.25);
    clock.t += 999;
    await take(sut);
    expect(sut.currentRate).toBeCloseTo(3.25);
    clock.t += 1;
    await take(sut);
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
              await take(sut);
            }
            expect(sut.currentRate).toBeGreaterThanOrEqual(1);
            expect(sut.currentRate).toBeLessThanOrEqual(10);
          }
        },
      ),
    );
  });
});
