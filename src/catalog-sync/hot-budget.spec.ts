import { describe, expect, it } from 'vitest';
import { dueWalks, HOT_SHARE_IDLE, HotBudget, hotShare, walkSlots, type HotCandidate } from './hot-budget';

const event = (eventId: string, asOfMs: number | null, score = 1, pages = 1): HotCandidate => ({
  eventId,
  asOfMs,
  score,
  pages,
});

describe(HotBudget.name, () => {
  it('refills at the given rate with one second of burst, and refuses when no token is left', () => {
    const sut = new HotBudget();
    sut.refill(0, 10);
    expect(sut.available).toBe(10);
    for (let i = 0; i < 10; i++) expect(sut.take(1)).toBe(true);
    expect(sut.take(1)).toBe(false);
    sut.refill(500, 10);
    expect(sut.available).toBeCloseTo(5);
    sut.refill(60_000, 10);
    expect(sut.available).toBe(10);
  });

  it('a walk takes its estimated pages (going below zero) and settles its real cost when it ends', () => {
    const sut = new HotBudget();
    sut.refill(0, 4);
    expect(sut.take(6)).toBe(true);
    expect(sut.available).toBe(-2);
    expect(sut.take(1)).toBe(false);
    sut.settle(6, 1);
    expect(sut.available).toBe(3);
    sut.settle(1, 0);
    expect(sut.available).toBe(4);
  });

  it('a lowered rate (429: the limiter halved it) shrinks what hot walks may take', () => {
    const sut = new HotBudget();
    sut.refill(0, 20);
    while (sut.take(1));
    sut.refill(1000, 5);
    let walks = 0;
    while (sut.take(1)) walks++;
    expect(walks).toBe(5);
  });
});

describe(hotShare.name, () => {
  it('keeps SYNC_FULL_PASS_MIN_SHARE_PCT for a full pass running here, and some headroom otherwise', () => {
    expect(hotShare(true, 30)).toBeCloseTo(0.7);
    expect(hotShare(true, 5)).toBe(HOT_SHARE_IDLE);
    expect(hotShare(false, 30)).toBe(HOT_SHARE_IDLE);
    expect(hotShare(false, 30)).toBeLessThan(1);
  });
});

describe(dueWalks.name, () => {
  it('takes the events whose data will pass the target before the next tick, never-walked and most stale first', () => {
    const now = 100_000;
    const sut = dueWalks(
      [
        event('fresh', now - 1000),
        event('due', now - 2500),
        event('stale', now - 10_000),
        event('never', null),
      ],
      now,
      3000,
      750,
      new Set(),
    );
    expect(sut.map((e) => e.eventId)).toEqual(['never', 'stale', 'due']);
  });

  it('ranks by staleness × demand, and leaves events being walked', () => {
    const now = 100_000;
    const sut = dueWalks(
      [event('quiet', now - 6000, 0.5), event('busy', now - 4000, 100), event('walking', now - 60_000, 100)],
      now,
      3000,
      750,
      new Set(['walking']),
    );
    expect(sut.map((e) => e.eventId)).toEqual(['busy', 'quiet']);
  });

  it('with a floor, adds the events at least that old after the due ones (spare budget), most stale first', () => {
    const now = 100_000;
    const sut = dueWalks(
      [
        event('just-walked', now - 200, 100),
        event('spare-old', now - 1500, 1),
        event('spare-young', now - 600, 1),
        event('due', now - 2800, 0.5),
        event('spare-busy', now - 900, 1000),
      ],
      now,
      3000,
      300,
      new Set(),
      500,
    );
    expect(sut.map((e) => [e.eventId, e.due])).toEqual([
      ['due', true],
      ['spare-busy', false],
      ['spare-old', false],
      ['spare-young', false],
    ]);
  });

  it('without a floor, takes only the due events', () => {
    const now = 100_000;
    const sut = dueWalks([event('young', now - 1500), event('due', now - 2900)], now, 3000, 300, new Set());
    expect(sut.map((e) => e.eventId)).toEqual(['due']);
  });
});

describe(walkSlots.name, () => {
  it('is what the budget keeps in flight (rate × walk duration, with half again), between the configured bound and 3× it', () => {
    expect(walkSlots(45, 50, 4)).toBe(4); // quiet: 45/s × 50 ms = 2.3 in flight
    expect(walkSlots(45, 150, 4)).toBe(11); // 45 × 0.15 × 1.5 = 10.1
    expect(walkSlots(45, 370, 4)).toBe(12); // a loaded machine: 25 wanted, 3× the bound
    expect(walkSlots(45, 370, 8)).toBe(24);
    expect(walkSlots(0, 370, 4)).toBe(4);
  });
});
