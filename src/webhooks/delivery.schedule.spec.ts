import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { afterFailure, MAX_DELIVERY_ATTEMPTS, RETRY_JITTER, RETRY_SCHEDULE_MS } from './delivery.schedule';

const S = 1000;
const MIN = 60 * S;
const H = 60 * MIN;

/**
 * A receiver and the schedule under a virtual clock: every try at `now`, the receiver up or down by `up(now)`,
 * the next try after afterFailure's delay. Returns the times of the tries and how it ended.
 */
function simulate(up: (now: number) => boolean, random: () => number = () => 0.5) {
  const tries: number[] = [];
  let now = 0;
  for (let attempt = 1; attempt <= 20; attempt++) {
    tries.push(now);
    if (up(now)) return { tries, outcome: 'delivered' as const };
    const next = afterFailure(attempt, random);
    if (next.kind === 'failed') return { tries, outcome: 'failed' as const };
    now += next.delayMs;
  }
  throw new Error('the schedule never ended');
}

describe(afterFailure.name, () => {
  it('retries after 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h, then fails (8 tries)', () => {
    const sut = simulate(() => false);

    expect(sut.outcome).toBe('failed');
    expect(sut.tries).toEqual(
      [0, 5 * S, 5 * S + 5 * MIN, 5 * S + 35 * MIN, 5 * S + 155 * MIN].concat([
        5 * S + 155 * MIN + 5 * H,
        5 * S + 155 * MIN + 15 * H,
        5 * S + 155 * MIN + 25 * H,
      ]),
    );
    expect(sut.tries).toHaveLength(MAX_DELIVERY_ATTEMPTS);
  });

  it('delivers to a receiver down for an hour at the first try after it is back (2 h 35 min 5 s)', () => {
    const sut = simulate((now) => now >= H);

    expect(sut.outcome).toBe('delivered');
    expect(sut.tries).toEqual([0, 5 * S, 5 * S + 5 * MIN, 5 * S + 35 * MIN, 5 * S + 155 * MIN]);
  });

  it('a receiver back within 24.8 h (the schedule with every delay jittered down) always gets the event', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 24.8 * H }),
        fc.double({ min: 0, max: 0.999_999, noNaN: true }),
        (backAt, r) => {
          expect(
            simulate(
              (now) => now >= backAt,
              () => r,
            ).outcome,
          ).toBe('delivered');
        },
      ),
    );
  });

  it('jitters each delay within ±10 % of the schedule', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: RETRY_SCHEDULE_MS.length }),
        fc.double({ min: 0, max: 0.999_999, noNaN: true }),
        (attempt, r) => {
          const base = RETRY_SCHEDULE_MS[attempt - 1] ?? 0;
          const sut = afterFailure(attempt, () => r);

          expect(sut.kind).toBe('retry');
          if (sut.kind !== 'retry') return;
          expect(sut.delayMs).toBeGreaterThanOrEqual(Math.floor(base * (1 - RETRY_JITTER)));
          expect(sut.delayMs).toBeLessThanOrEqual(Math.ceil(base * (1 + RETRY_JITTER)));
        },
      ),
    );
    expect(afterFailure(1, () => 0)).toEqual({ kind: 'retry', delayMs: 4500 });
    expect(afterFailure(1, () => 0.999_999)).toEqual({ kind: 'retry', delayMs: 5500 });
  });

  it('fails any try past the schedule (a manual retry of a failed delivery gets one try)', () => {
    expect(afterFailure(MAX_DELIVERY_ATTEMPTS)).toEqual({ kind: 'failed' });
    expect(afterFailure(MAX_DELIVERY_ATTEMPTS + 3)).toEqual({ kind: 'failed' });
  });
});
