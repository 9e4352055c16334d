import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import type { SyncConfig } from '../config/sync.config';
import type { DatabaseClock } from '../database/database-clock';
import type { DurableWorkService } from '../durable-work/durable-work.service';
import type { UpstreamClient } from '../upstream/upstream.client';
import { UpstreamError } from '../upstream/upstream.error';
import type { ActiveListing } from '../upstream/upstream.types';
import type { ListingRow, LiveListingObservation } from './catalog-mirror.types';
import type { MirrorObservations } from './mirror-observations';
import { ServedAccuracyMetrics } from './served-accuracy.metrics';
import { ServedAccuracySampler } from './served-accuracy.sampler';
import { listingRow } from '../../test/support/listing-row';

const row = (ticketId: number, price: string): ListingRow => listingRow('7', String(ticketId), price);
const live = (ticketId: bigint | null, price: bigint): ActiveListing => ({
  eventId: 7n,
  ticketId,
  askPriceMinor: price,
  raw: {},
});

function setup(upstreamItems: ActiveListing[] | Error, intervalMs = 5000) {
  const applied: LiveListingObservation[] = [];
  const loops: string[] = [];
  const registry = new Registry();
  const metrics = new ServedAccuracyMetrics({ registry });
  const upstream = {
    async *walkActiveListings() {
      await Promise.resolve();
      if (upstreamItems instanceof Error) throw upstreamItems;
      yield { items: upstreamItems, nextCursor: null };
    },
  } as unknown as UpstreamClient;
  const observations = {
    apply: async (o: LiveListingObservation) => {
      applied.push(o);
      return { changed: true, generation: 1n };
    },
  } as unknown as MirrorObservations;
  const observedAt = new Date('2026-05-06T07:08:09.000Z');
  const sut = new ServedAccuracySampler(
    upstream,
    observations,
    metrics,
    { now: () => observedAt } as unknown as DatabaseClock,
    { MIRROR_ACCURACY_SAMPLE_INTERVAL_MS: intervalMs } as SyncConfig,
    { periodic: (spec: { name: string }) => loops.push(spec.name) } as unknown as DurableWorkService,
  );
  return { sut, applied, loops, registry, observedAt };
}

describe(ServedAccuracySampler.name, () => {
  it('counts a served listing still active at the served price buyable, and applies what it saw', async () => {
    const { sut, applied, registry, observedAt } = setup([live(1n, 100n)]);
    sut.noteServed([row(1, '100')]);
    const outcome = await sut.sampleOnce();
    expect(outcome && 'verdict' in outcome ? outcome.verdict : outcome).toBe('buyable');
    expect(applied).toEqual([{ eventId: 7n, ticketId: 1n, live: live(1n, 100n), observedAt }]);
    expect(sut.view()).toMatchObject({ sampling: true, sampled: 1, stale: 0, accuracy: 1 });
    const text = await registry.metrics();
    expect(text).toContain('mirror_served_accuracy 1');
    expect(text).toContain('mirror_served_sampled_total 1');
  });

  it('counts a served listing gone upstream stale and applies its absence (the mirror drops it)', async () => {
    const { sut, applied, registry } = setup([live(2n, 100n)]);
    sut.noteServed([row(1, '100')]);
    const outcome = await sut.sampleOnce();
    expect(outcome && 'verdict' in outcome ? outcome.verdict : outcome).toBe('gone');
    expect(applied.map((o) => o.live)).toEqual([null]);
    expect(sut.view()).toMatchObject({ sampled: 1, stale: 1, accuracy: 0 });
    expect(await registry.metrics()).toContain('mirror_served_stale_total{reason="gone"} 1');
  });

  it('counts a repriced one stale and applies the new price', async () => {
    const { sut, applied, registry } = setup([live(1n, 150n)]);
    sut.noteServed([row(1, '100')]);
    await sut.sampleOnce();
    expect(applied.map((o) => o.live?.askPriceMinor)).toEqual([150n]);
    expect(await registry.metrics()).toContain('mirror_served_stale_total{reason="repriced"} 1');
  });

  it('decides nothing (no verdict, nothing applied) when the walk fails or null identifiers could be it', async () => {
    const failing = setup(
      new UpstreamError({
        code: 'UNAVAILABLE',
        operation: 'listActiveListings',
        message: '503',
        attempts: 1,
      }),
    );
    failing.sut.noteServed([row(1, '100')]);
    expect(await failing.sut.sampleOnce()).toMatchObject({ failure: 'upstream' });
    const undecided = setup([live(null, 100n)]);
    undecided.sut.noteServed([row(1, '100')]);
    expect(await undecided.sut.sampleOnce()).toMatchObject({ failure: 'undecided' });
    for (const { sut, applied } of [failing, undecided]) {
      expect(applied).toEqual([]);
      expect(sut.view()).toMatchObject({ sampled: 0, undecided: 1, accuracy: null });
    }
    expect(await undecided.registry.metrics()).toContain(
      'mirror_served_sample_failures_total{reason="undecided"} 1',
    );
  });

  it('samples nothing when nothing was served, and runs no loop when the interval is 0', async () => {
    const { sut, loops } = setup([]);
    expect(await sut.sampleOnce()).toBeNull();
    expect(loops).toEqual(['mirror-accuracy-sampler']);
    const off = setup([], 0);
    expect(off.loops).toEqual([]);
    expect(off.sut.view()).toMatchObject({ sampling: false, intervalMs: 0 });
  });
});
