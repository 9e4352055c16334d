import { describe, expect, it } from 'vitest';
import { overlappingWalks, useLiveCatalogRig, type Replica, type WalkRow } from '../support/live-catalog-rig';
import { waitUntil } from '../support/wait';

/** What every replica shares: small pages (a walk of a busy event is several upstream requests). */
const COMMON = {
  SYNC_PAGE_SIZE: '10',
  SYNC_HOT_TARGET_MS: '1000',
  SYNC_HOT_MIN_INTERVAL_MS: '200',
  SYNC_HOT_DEMAND_HALF_LIFE_MS: '5000',
  LISTINGS_FRESH_TIMEOUT_MS: '10000',
};

/**
 * Whether the walks of an event in flight have finished. The event stays hot for a while after its reads stop,
 * so B's and C's schedules go on walking it: under load one of those may always be running. Only the newest walk
 * may be, and not for long (a hung walk fails the wait); two running at once are an overlap, caught too.
 */
function settled(walks: WalkRow[]): boolean {
  const running = walks.filter((w) => w.status === 'running');
  const newest = Math.max(...walks.map((w) => w.started_at.getTime()));
  return running.every((w) => w.started_at.getTime() === newest && Date.now() - newest < 10_000);
}

/**
 * Issue 30 across replicas (service processes on one database, one sandbox):
 * - a hot event read only on replica A, which cannot walk (SYNC_ENABLED=false: no scheduler), is refreshed by
 *   replica B's schedule: every walk of it is B's (its pass `holder`), and A serves what B's walk brought;
 * - with a third replica C scheduling too, many concurrent `?fresh=true` reads on all three and both schedulers
 *   hammering one event: no two `event_listings` passes of it ever overlapped in time (from `sync_passes`).
 */
describe('live catalog across replicas: demand on A walked by B; walks of one event never overlap', () => {
  const rig = useLiveCatalogRig({ seed: 'live-replicas', events: 8, listings: 80 });
  let a: Replica;
  let b: Replica;

  it('a hot event read on A (which cannot walk) is refreshed by B’s schedule: every walk’s holder is B', async () => {
    const read = rig.seedBusyEvent(20, 'Read on A');
    const unread = rig.seedBusyEvent(20, 'Read by nobody');
    b = await rig.spawn({ ...COMMON, SYNC_ENABLED: 'true', SYNC_ON_STARTUP: 'true' });
    a = await rig.spawn({ ...COMMON, SYNC_ENABLED: 'false' });
    await rig.fullPassCompleted();
    // A listing appears upstream after the full pass: only a walk of the event can bring it.
    const added = rig.list(read, 1n);

    let servedOnA = false;
    await waitUntil(
      async () => {
        const res = await rig.get(a, `/v1/events/${read.eventId}/listings?limit=5`);
        expect(res.status).toBe(200);
        const page = (await res.json()) as { items: { ticket_id: string }[] };
        servedOnA ||= page.items.some((i) => BigInt(i.ticket_id) === added);
        return (
          servedOnA && (await rig.walksOf(read.eventId)).filter((w) => w.status === 'completed').length >= 3
        );
      },
      40_000,
      200,
    );

    const walks = await rig.walksOf(read.eventId);
    expect(walks.length).toBeGreaterThanOrEqual(3);
    // Which replica walked: B, by its hot schedule, every time; never A.
    expect(walks.filter((w) => !rig.isHolder(b, w.holder))).toEqual([]);
    expect(walks.filter((w) => rig.isHolder(a, w.holder))).toEqual([]);
    expect(new Set(walks.map((w) => w.trigger))).toEqual(new Set(['hot']));
    expect(overlappingWalks(walks)).toEqual([]);
    // An event nobody reads is not walked.
    expect(await rig.walksOf(unread.eventId)).toEqual([]);
  }, 90_000);

  it('concurrent fresh=true reads on every replica and two schedulers: no two walks of the event overlap', async () => {
    const busy = rig.seedBusyEvent(40, 'Hammered');
    const c = await rig.spawn({ ...COMMON, SYNC_ENABLED: 'true', SYNC_ON_STARTUP: 'false' });
    // Each walk of the event is 4–5 pages of 30 ms: long enough for the others to collide with it.
    rig.sandbox.admin.setFaults([{ operation: 'listings', kind: 'latency', latencyMs: 30 }]);
    const statuses: number[] = [];
    const until = Date.now() + 8_000;
    for (let round = 0; round < 200 && Date.now() < until; round++) {
      const reads = [a, b, c].flatMap((replica) =>
        Array.from({ length: 8 }, async () => {
          const res = await rig.get(replica, `/v1/events/${busy.eventId}/listings?fresh=true&limit=5`);
          await res.arrayBuffer();
          statuses.push(res.status);
        }),
      );
      await Promise.all(reads);
    }
    rig.sandbox.admin.clearFaults();
    // The walks in flight finish (bounded), then the record is read (`settled`).
    await waitUntil(async () => settled(await rig.walksOf(busy.eventId)), 15_000, 100).catch(
      async (error: unknown) => {
        throw new Error(`${(error as Error).message}: ${JSON.stringify(await rig.walksOf(busy.eventId))}`);
      },
    );

    expect(statuses.length).toBeGreaterThanOrEqual(48);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
    const walks = await rig.walksOf(busy.eventId);
    // Concurrent readers coalesced: far fewer walks than reads, but many walks, by several replicas and by
    // both kinds of trigger (fresh reads and the schedulers of B and C).
    expect(walks.length).toBeGreaterThanOrEqual(5);
    expect(walks.length).toBeLessThan(statuses.length);
    const holders = new Set(walks.map((w) => [a, b, c].findIndex((r) => rig.isHolder(r, w.holder))));
    expect(holders.has(-1)).toBe(false);
    expect(holders.size).toBeGreaterThanOrEqual(2);
    expect(walks.some((w) => w.trigger === 'fresh')).toBe(true);
    expect(walks.some((w) => w.trigger === 'hot')).toBe(true);
    // Single flight across replicas, from the pass records: each walk started after the previous one ended.
    expect(overlappingWalks(walks)).toEqual([]);
    expect(walks.filter((w) => w.status === 'completed').length).toBeGreaterThanOrEqual(5);
  }, 90_000);
});
