import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { budgetShare, isLive, readHeartbeat, type ReplicaRow } from './replica-budget';

const DEAD_AFTER_MS = 5_000;

const row = (over: Partial<ReplicaRow> = {}): ReplicaRow => ({
  instanceId: 'other',
  seenMsAgo: 0,
  stopped: false,
  throttleFactor: null,
  throttledMsAgo: null,
  pausedForMs: 0,
  ...over,
});

describe(budgetShare.name, () => {
  it('is the whole budget with one replica live, and budget / N rounded down with N', () => {
    expect(budgetShare(40, 1)).toBe(40);
    expect(budgetShare(40, 2)).toBe(20);
    expect(budgetShare(40, 3)).toBe(13);
  });

  it('never lets N replicas together exceed the budget, and never refuses everything', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 100_000 }), fc.integer({ min: 1, max: 64 }), (budget, live) => {
        const share = budgetShare(budget, live);
        expect(share).toBeGreaterThanOrEqual(1);
        // Within one request per replica of the budget; at most the budget whenever it covers one each.
        expect(share * live).toBeLessThanOrEqual(Math.max(budget, live));
        expect(share * live).toBeGreaterThan(budget - live);
      }),
    );
  });
});

describe(isLive.name, () => {
  it('counts a replica seen within the cut-off, by the database clock, unless it said it stopped', () => {
    expect(isLive(row({ seenMsAgo: 0 }), DEAD_AFTER_MS)).toBe(true);
    expect(isLive(row({ seenMsAgo: DEAD_AFTER_MS - 1 }), DEAD_AFTER_MS)).toBe(true);
    expect(isLive(row({ seenMsAgo: DEAD_AFTER_MS }), DEAD_AFTER_MS)).toBe(false);
    expect(isLive(row({ seenMsAgo: 60_000 }), DEAD_AFTER_MS)).toBe(false);
    expect(isLive(row({ seenMsAgo: 10, stopped: true }), DEAD_AFTER_MS)).toBe(false);
    // A beat committed just after the reader's statement began reads as slightly in the future.
    expect(isLive(row({ seenMsAgo: -3 }), DEAD_AFTER_MS)).toBe(true);
  });
});

describe(readHeartbeat.name, () => {
  it('counts itself plus every live other replica', () => {
    expect(readHeartbeat([], DEAD_AFTER_MS).live).toBe(1);
    const others = [
      row({ instanceId: 'b', seenMsAgo: 800 }),
      row({ instanceId: 'c', seenMsAgo: 7_000 }),
      row({ instanceId: 'd', seenMsAgo: 100, stopped: true }),
      row({ instanceId: 'e', seenMsAgo: 1_200 }),
    ];
    expect(readHeartbeat(others, DEAD_AFTER_MS).live).toBe(3);
  });

  it("passes on every other replica's 429, a dead or stopped one's too (it is about the upstream)", () => {
    const view = readHeartbeat(
      [
        row({ instanceId: 'b', throttleFactor: 0.5, throttledMsAgo: 1_200, pausedForMs: 800 }),
        row({ instanceId: 'c', seenMsAgo: 9_000, throttleFactor: 0.25, throttledMsAgo: 8_000 }),
        row({ instanceId: 'd', stopped: true }),
      ],
      DEAD_AFTER_MS,
    );
    expect(view.throttles).toEqual([
      { factor: 0.5, ageMs: 1_200, pauseMs: 800 },
      { factor: 0.25, ageMs: 8_000, pauseMs: 0 },
    ]);
    expect(view.live).toBe(2);
  });
});
