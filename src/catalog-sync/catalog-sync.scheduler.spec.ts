import { Logger } from '@nestjs/common';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { SyncConfig } from '../config/sync.config';
import type { DurableWorkService } from '../durable-work/durable-work.service';
import { periodicLoop, WorkerLoop, type PeriodicSpec } from '../durable-work/worker-loop';
import { CatalogSyncScheduler } from './catalog-sync.scheduler';
import type { CatalogSyncService } from './catalog-sync.service';

const RUN_MS = 300;

/** Records each scheduled call at the fake clock's time; a pass takes RUN_MS. */
function fakeSync() {
  const calls: { at: number; call: string }[] = [];
  const record = (call: string) => calls.push({ at: Date.now(), call });
  const sync = {
    reapAbandoned: async () => record('reap'),
    runScheduled: async (resource: string, trigger: string) => {
      record(`${resource}:${trigger}`);
      await new Promise((r) => setTimeout(r, RUN_MS));
      return true;
    },
    refreshProtocolConfig: async () => {
      record('protocol-config');
      return null;
    },
    cancelPasses: async () => {
      record('cancel');
    },
  };
  return { calls, sync: sync as unknown as CatalogSyncService };
}

const work = {
  periodic: (spec: PeriodicSpec) => new WorkerLoop(periodicLoop(spec), new Logger('test')),
} as unknown as DurableWorkService;

function config(overrides: Partial<SyncConfig>): SyncConfig {
  return Object.assign(new SyncConfig(), {
    SYNC_ENABLED: true,
    SYNC_ON_STARTUP: true,
    SYNC_EVENTS_INTERVAL_MS: 1000,
    SYNC_LISTINGS_INTERVAL_MS: 5000,
    SYNC_PROTOCOL_CONFIG_REFRESH_MS: 100_000,
    SYNC_JITTER_MS: 0,
    ...overrides,
  });
}

/** Shutdown waits for the run in progress, which needs the fake clock to move. */
async function stop(sut: CatalogSyncScheduler): Promise<void> {
  const stopping = sut.beforeApplicationShutdown();
  await vi.advanceTimersByTimeAsync(RUN_MS);
  await stopping;
}

describe(CatalogSyncScheduler.name, () => {
  beforeEach(() => {
    vi.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('runs a startup pass at once, then each resource its interval after the previous run ended, reaping first', async () => {
    const { calls, sync } = fakeSync();
    const sut = new CatalogSyncScheduler(sync, work, config({}));
    sut.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(2700);
    await stop(sut);
    const events = calls.filter((c) => c.call.startsWith('events'));
    // 0 → ends 300 → next at 1300 → ends 1600 → next at 2600.
    expect(events).toEqual([
      { at: 0, call: 'events:startup' },
      { at: 1300, call: 'events:schedule' },
      { at: 2600, call: 'events:schedule' },
    ]);
    expect(calls.filter((c) => c.call.startsWith('listings'))).toEqual([{ at: 0, call: 'listings:startup' }]);
    expect(calls.filter((c) => c.call === 'protocol-config')).toEqual([{ at: 0, call: 'protocol-config' }]);
    // Every scheduled pass is preceded by a reap of abandoned passes.
    const passes = calls.filter((c) => c.call.includes(':'));
    expect(calls.filter((c) => c.call === 'reap')).toHaveLength(passes.length);
  });

  it('without SYNC_ON_STARTUP waits one interval (plus jitter at most) before the first pass', async () => {
    const { calls, sync } = fakeSync();
    const sut = new CatalogSyncScheduler(sync, work, config({ SYNC_ON_STARTUP: false, SYNC_JITTER_MS: 200 }));
    sut.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(999);
    expect(calls.filter((c) => c.call.startsWith('events'))).toEqual([]);
    await vi.advanceTimersByTimeAsync(201);
    await stop(sut);
    const [first] = calls.filter((c) => c.call.startsWith('events'));
    expect(first?.call).toBe('events:schedule');
    expect(first?.at).toBeGreaterThanOrEqual(1000);
    expect(first?.at).toBeLessThanOrEqual(1200);
  });

  it('SYNC_ENABLED=false schedules nothing; shutdown stops every loop', async () => {
    const disabled = fakeSync();
    const off = new CatalogSyncScheduler(disabled.sync, work, config({ SYNC_ENABLED: false }));
    off.onApplicationBootstrap();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(disabled.calls).toEqual([]);

    const { calls, sync } = fakeSync();
    const sut = new CatalogSyncScheduler(sync, work, config({}));
    sut.onApplicationBootstrap();
    // Stopped while the startup passes run.
    await vi.advanceTimersByTimeAsync(RUN_MS / 2);
    await stop(sut);
    const before = calls.length;
    await vi.advanceTimersByTimeAsync(20_000);
    expect(before).toBeGreaterThan(0);
    expect(calls).toHaveLength(before);
    // The pass running when its loop was stopped was cancelled, not waited out.
    expect(calls.map((c) => c.call)).toContain('cancel');
  });
});
