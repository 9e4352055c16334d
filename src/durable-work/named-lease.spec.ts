import { describe, expect, it } from 'vitest';
import { HeldLease, LeaseLostError, type LeaseStore, type LeaseTimers } from './named-lease';

/** Stands in for the owner's cancellation (catalog sync's PassCancelledError). */
class WorkCancelledError extends Error {}

class ManualTimers implements LeaseTimers {
  fn: (() => void) | null = null;
  intervalMs = 0;
  setInterval(fn: () => void, ms: number): unknown {
    this.fn = fn;
    this.intervalMs = ms;
    return 1;
  }
  clearInterval(): void {
    this.fn = null;
  }
}

function store(answers: (boolean | Error)[]): LeaseStore & { calls: number } {
  const s = {
    calls: 0,
    async renew(): Promise<boolean> {
      const next = answers[Math.min(s.calls, answers.length - 1)];
      s.calls++;
      if (next instanceof Error) throw next;
      return next ?? true;
    },
  };
  return s;
}

describe(HeldLease.name, () => {
  it('renews every third of the TTL while held', async () => {
    const timers = new ManualTimers();
    const s = store([true]);
    const sut = new HeldLease('sync:listings', '7', 3000, s, undefined, timers);
    expect(timers.intervalMs).toBe(1000);
    expect(await sut.renew()).toBe(true);
    expect(await sut.renew()).toBe(true);
    expect(s.calls).toBe(2);
    expect(sut.signal.aborted).toBe(false);
  });

  it('a renewal that finds the token replaced aborts the pass with LeaseLostError and stops renewing', async () => {
    const timers = new ManualTimers();
    const lost: Error[] = [];
    const s = store([true, false]);
    const sut = new HeldLease('sync:events', '3', 900, s, (e) => lost.push(e), timers);
    await sut.renew();
    expect(await sut.renew()).toBe(false);
    expect(sut.signal.reason).toBeInstanceOf(LeaseLostError);
    expect(sut.lost).toBe(true);
    expect(lost).toHaveLength(1);
    expect(timers.fn).toBeNull();
    expect(await sut.renew()).toBe(false);
    expect(s.calls).toBe(2);
  });

  it('a renewal that errors (database unreachable) keeps the lease and tries again', async () => {
    const s = store([new Error('connection refused'), true]);
    const sut = new HeldLease('sync:events', '1', 900, s, undefined, new ManualTimers());
    expect(await sut.renew()).toBe(true);
    expect(await sut.renew()).toBe(true);
    expect(sut.signal.aborted).toBe(false);
  });

  it('abort() keeps the first reason (a cancelled pass is not reported as lost)', () => {
    const sut = new HeldLease('sync:events', '1', 900, store([true]), undefined, new ManualTimers());
    sut.abort(new WorkCancelledError());
    sut.abort(new LeaseLostError());
    expect(sut.signal.reason).toBeInstanceOf(WorkCancelledError);
    expect(sut.lost).toBe(false);
  });
});
