import { describe, expect, it, vi } from 'vitest';
import { SyncConfig } from '../config/sync.config';
import type { DatabaseClock } from '../database/database-clock';
import type { DurableWorkService } from '../durable-work/durable-work.service';
import type { UpstreamClient } from '../upstream/upstream.client';
import type { SyncMetrics } from './catalog-sync.metrics';
import type { CatalogSyncService } from './catalog-sync.service';
import type { HotEventRow } from './event-demand.repository';
import type { HotSet } from './hot-set';
import { HotWalkScheduler } from './hot-walk.scheduler';

const NOW = 1_000_000;

/** A scheduler over fakes whose walks never finish (so every started walk keeps its slot), one tick run. */
function tickOnce(events: HotEventRow[], ratePerSecond = 50) {
  const started: string[] = [];
  const skipped: Record<string, number> = {};
  const sync = {
    fullPassRunning: () => false,
    start: (_resource: string, eventId: bigint) => {
      started.push(eventId.toString());
      return new Promise(() => undefined);
    },
  } as unknown as CatalogSyncService;
  const hotSet = { events: () => events, walked: vi.fn<() => void>() } as unknown as HotSet;
  const upstream = { currentRatePerSecond: ratePerSecond } as unknown as UpstreamClient;
  const clock = { nowMs: () => NOW } as unknown as DatabaseClock;
  const work = { claiming: true, periodic: vi.fn<() => void>() } as unknown as DurableWorkService;
  const metrics = {
    hotBudgetShare: { set: vi.fn<() => void>() },
    hotWalkSkipped: (reason: string, count = 1) => {
      skipped[reason] = (skipped[reason] ?? 0) + count;
    },
    hotWalkFinished: vi.fn<() => void>(),
  } as unknown as SyncMetrics;
  const config = Object.assign(new SyncConfig(), {
    SYNC_ENABLED: true,
    SYNC_HOT_TARGET_MS: 2000,
    SYNC_HOT_MIN_INTERVAL_MS: 500,
    SYNC_HOT_CONCURRENCY: 4,
  });
  new HotWalkScheduler(sync, hotSet, upstream, clock, work, metrics, config).tick();
  return { started, skipped };
}

const hot = (eventId: string, ageMs: number, pages = 1): HotEventRow => ({
  eventId,
  score: 10,
  asOfMs: NOW - ageMs,
  pages,
});

describe(HotWalkScheduler.name, () => {
  it('starts as many one-page walks as the budget needs, not SYNC_HOT_CONCURRENCY (Little’s law, up to 3×)', () => {
    // 30 due one-page events, a budget of 45 walks/s and walks of ~300 ms: ~21 in flight wanted, 12 allowed.
    const events = Array.from({ length: 30 }, (_, i) => hot(`${100 + i}`, 5000 + i));
    const { started, skipped } = tickOnce(events);
    expect(started).toHaveLength(12);
    // The most stale first; the 18 due ones left over are counted as skipped for a slot.
    expect(started[0]).toBe('129');
    expect(skipped.concurrency).toBe(18);
  });

  it('keeps SYNC_HOT_CONCURRENCY as the floor when the budget needs fewer walks at once', () => {
    const events = Array.from({ length: 10 }, (_, i) => hot(`${100 + i}`, 5000 + i));
    // 8 req/s × 0.9 × 300 ms × 1.5 = 3.2 walks in flight needed (the budget has 7): the configured 4 run.
    const { started, skipped } = tickOnce(events, 8);
    expect(started).toHaveLength(4);
    expect(skipped.concurrency).toBe(6);
  });

  it('runs at most SYNC_HOT_CONCURRENCY walks of more than one page (they hold a connection), and one-page walks past them', () => {
    const events = [
      ...Array.from({ length: 6 }, (_, i) => hot(`${200 + i}`, 10_000 + i, 2)),
      ...Array.from({ length: 20 }, (_, i) => hot(`${300 + i}`, 5000 + i)),
    ];
    const { started, skipped } = tickOnce(events);
    expect(started.filter((id) => id.startsWith('2'))).toEqual(['205', '204', '203', '202']);
    // The two long walks without a connection wait; eight one-page walks fill the remaining slots.
    expect(started.filter((id) => id.startsWith('3'))).toHaveLength(8);
    expect(skipped.concurrency).toBe(2 + 12);
  });
});
