import { describe, expect, it } from 'vitest';
import { SlidingWindowThrottlerStorage } from './sliding-window.storage';

function setup() {
  let now = 1_000_000;
  const sut = new SlidingWindowThrottlerStorage(() => now);
  return { sut, advance: (ms: number) => (now += ms) };
}

describe(SlidingWindowThrottlerStorage.name, () => {
  it('counts up to the limit, then refuses without counting, with Retry-After until the oldest hit leaves', () => {
    const { sut, advance } = setup();
    const passed = [];
    for (let i = 0; i < 3; i++) {
      passed.push(sut.hit('k', 60_000, 3));
      advance(10_000);
    }
    expect(passed.map((r) => [r.totalHits, r.isBlocked, r.timeToExpire])).toEqual([
      [1, false, 60],
      [2, false, 50],
      [3, false, 40],
    ]);
    // t = 30 s: full; the first hit (t = 0) leaves at 60 s.
    expect(sut.hit('k', 60_000, 3)).toEqual({
      totalHits: 4,
      timeToExpire: 30,
      isBlocked: true,
      timeToBlockExpire: 30,
    });
    advance(29_999);
    expect(sut.hit('k', 60_000, 3)).toMatchObject({ isBlocked: true, timeToBlockExpire: 1 });
    advance(1);
    // The first hit has left; refusals were not counted, so exactly one slot is free.
    expect(sut.hit('k', 60_000, 3)).toMatchObject({ totalHits: 3, isBlocked: false });
    expect(sut.hit('k', 60_000, 3)).toMatchObject({ isBlocked: true, timeToBlockExpire: 10 });
  });

  it('is a sliding window: never more than the limit in any window-long span', () => {
    const { sut, advance } = setup();
    const accepted: number[] = [];
    let t = 0;
    for (let i = 0; i < 2000; i++) {
      const step = (i * 7919) % 97;
      advance(step);
      t += step;
      if (!sut.hit('k', 1000, 25).isBlocked) accepted.push(t);
    }
    for (let i = 25; i < accepted.length; i++)
      expect(accepted[i] - accepted[i - 25]).toBeGreaterThanOrEqual(1000);
    expect(accepted.length).toBeGreaterThan(100);
  });

  it('keeps keys and throttler names apart', async () => {
    const { sut } = setup();
    sut.hit('a', 60_000, 1);
    expect(sut.hit('a', 60_000, 1).isBlocked).toBe(true);
    expect(sut.hit('b', 60_000, 1).isBlocked).toBe(false);
    await expect(sut.increment('a', 60_000, 1, 0, 'other')).resolves.toMatchObject({ isBlocked: false });
    await expect(sut.increment('a', 60_000, 1, 0, 'default')).resolves.toMatchObject({ isBlocked: true });
  });

  it('holds large budgets (a ring buffer grown on demand, no argument spreading)', () => {
    const { sut } = setup();
    let last;
    for (let i = 0; i < 200_000; i++) last = sut.hit('k', 60_000, 200_000);
    expect(last).toMatchObject({ totalHits: 200_000, isBlocked: false });
    expect(sut.hit('k', 60_000, 200_000)).toMatchObject({ isBlocked: true, timeToBlockExpire: 60 });
  });

  it('forgets idle keys on sweep', () => {
    const { sut, advance } = setup();
    sut.hit('a', 1000, 5);
    advance(500);
    sut.hit('b', 1000, 5);
    advance(600);
    sut.sweep();
    expect(sut.keys).toBe(1);
    advance(1000);
    sut.sweep();
    expect(sut.keys).toBe(0);
    sut.onApplicationShutdown();
  });
});
