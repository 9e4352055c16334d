import { afterEach, describe, expect, it, vi } from 'vitest';
import { raceTimeout, TIMED_OUT } from './race-timeout';

describe(raceTimeout.name, () => {
  afterEach(() => vi.useRealTimers());

  it('answers the work when it settles first and leaves no timer behind', async () => {
    vi.useFakeTimers();
    const sut = raceTimeout(Promise.resolve('done'), 1000);
    await expect(sut).resolves.toBe('done');
    expect(vi.getTimerCount()).toBe(0);
  });

  it('answers TIMED_OUT when the time passes first', async () => {
    vi.useFakeTimers();
    const sut = raceTimeout(new Promise<string>(() => undefined), 1000);
    await vi.advanceTimersByTimeAsync(1000);
    await expect(sut).resolves.toBe(TIMED_OUT);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('passes a rejection of the work through', async () => {
    await expect(raceTimeout(Promise.reject(new Error('boom')), 1000)).rejects.toThrow('boom');
  });
});
