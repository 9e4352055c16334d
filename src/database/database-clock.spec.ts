import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { DataSource } from 'typeorm';
import { DATABASE_CLOCK_REFRESH_MS, DatabaseClock, anchorOf, databaseTimeAt } from './database-clock';

/** A data source whose clock reads `databaseMs()`; each query takes `roundTripMs` of (fake) time. */
function fakeDatabase(databaseMs: () => number, roundTripMs = 0) {
  const query = vi.fn<() => Promise<{ ms: string }[]>>(async () => {
    const ms = databaseMs();
    if (roundTripMs > 0) await vi.advanceTimersByTimeAsync(roundTripMs);
    return [{ ms: String(ms) }];
  });
  return { dataSource: { query } as unknown as DataSource, query };
}

/** Lets the background measurement's promise chain run (no time passes). */
async function settled(): Promise<void> {
  for (let i = 0; i < 10; i++) await Promise.resolve();
}

describe(DatabaseClock.name, () => {
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'performance', 'setTimeout'] });
    // The replica's wall clock runs ten minutes ahead of the database's.
    vi.setSystemTime(new Date('2026-11-27T12:10:00Z'));
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  const databaseEpoch = Date.parse('2026-11-27T12:00:00Z');

  it("answers the database's time, not the replica's wall clock, once measured", async () => {
    const start = performance.now();
    const { dataSource } = fakeDatabase(() => databaseEpoch + (performance.now() - start));
    const sut = new DatabaseClock(dataSource);

    await sut.onApplicationBootstrap();
    vi.advanceTimersByTime(1_500);

    expect(sut.nowMs()).toBe(databaseEpoch + 1_500);
    expect(sut.now().toISOString()).toBe('2026-11-27T12:00:01.500Z');
  });

  it('places the reading at the middle of the round trip', async () => {
    const { dataSource } = fakeDatabase(() => databaseEpoch, 40);
    const sut = new DatabaseClock(dataSource);

    await sut.measure();

    // Read at the start of a 40 ms round trip, placed 20 ms in: 20 ms after the answer, 20 ms past the anchor.
    expect(sut.nowMs()).toBe(databaseEpoch + 20);
  });

  it('is not moved by a jump of the wall clock (it runs on the monotonic clock between measurements)', async () => {
    const { dataSource } = fakeDatabase(() => databaseEpoch);
    const sut = new DatabaseClock(dataSource);
    await sut.measure();

    vi.setSystemTime(new Date('2030-01-01T00:00:00Z'));

    expect(sut.nowMs()).toBe(databaseEpoch);
  });

  it('measures again, in the background, once the estimate is older than the refresh interval', async () => {
    let dbNow = databaseEpoch;
    const { dataSource, query } = fakeDatabase(() => dbNow);
    const sut = new DatabaseClock(dataSource);
    await sut.measure();

    vi.advanceTimersByTime(DATABASE_CLOCK_REFRESH_MS - 1);
    sut.nowMs();
    expect(query).toHaveBeenCalledTimes(1);

    vi.advanceTimersByTime(2);
    // The database's clock was stepped meanwhile (say NTP on its host): the next measurement adopts it.
    dbNow = databaseEpoch + 5 * 60_000;
    const stale = sut.nowMs();
    expect(stale).toBe(databaseEpoch + DATABASE_CLOCK_REFRESH_MS + 1);
    await settled();
    expect(query).toHaveBeenCalledTimes(2);
    expect(sut.nowMs()).toBe(dbNow);
  });

  it('shares one round trip between concurrent measurements', async () => {
    const { dataSource, query } = fakeDatabase(() => databaseEpoch, 10);
    const sut = new DatabaseClock(dataSource);

    await Promise.all([sut.measure(), sut.measure(), sut.measure()]);

    expect(query).toHaveBeenCalledTimes(1);
  });

  it('keeps the last estimate when a measurement fails', async () => {
    let fail = false;
    const query = vi.fn<() => Promise<{ ms: number }[]>>(async () => {
      if (fail) throw new Error('connect ECONNREFUSED');
      return [{ ms: databaseEpoch }];
    });
    const sut = new DatabaseClock({ query } as unknown as DataSource);
    await sut.measure();
    fail = true;
    vi.advanceTimersByTime(DATABASE_CLOCK_REFRESH_MS + 1);

    expect(sut.nowMs()).toBe(databaseEpoch + DATABASE_CLOCK_REFRESH_MS + 1);
    await settled();
    expect(query).toHaveBeenCalledTimes(2);
    expect(sut.nowMs()).toBe(databaseEpoch + DATABASE_CLOCK_REFRESH_MS + 1);
  });
});

describe(anchorOf.name, () => {
  it('carries a reading forward by the monotonic time elapsed since its midpoint', () => {
    const anchor = anchorOf(1_000_000, 100, 140);
    expect(databaseTimeAt(anchor, 120)).toBe(1_000_000);
    expect(databaseTimeAt(anchor, 1_120)).toBe(1_001_000);
  });
});
