import { describe, expect, it } from 'vitest';
import { differences, useLiveCatalogRig } from '../support/live-catalog-rig';
import { waitUntil } from '../support/wait';

/** Long enough that the dead walk's lease is still held when B's read comes: B must wait it out and reap. */
const LEASE_TTL_MS = 15_000;
const PAGE_SIZE = 10;
const BUSY_LISTINGS = 200;

/**
 * Issue 30's acceptance, kill -9 mid-walk: a per-event walk of a busy event (200 listings, 20 pages of 10, each
 * page slowed to 250 ms upstream) runs on replica A and is provably mid-way (its pass `running` with pages
 * written, fewer than all) when A is killed with SIGKILL. The upstream then changes (listings cancelled,
 * repriced, added). The next complete walk, on replica B (which runs no scheduled pass, so only that walk can
 * fix the event), leaves the mirror exactly equal to the upstream (sync:verify: zero differences), and the dead
 * walk's pass is reaped (failed, abandoned), not left `running`.
 */
describe('live catalog: kill -9 mid-walk, then the next walk makes the mirror exact (service processes)', () => {
  const rig = useLiveCatalogRig({ seed: 'live-kill', events: 6, listings: 60 });

  it('the dead walk is reaped and the next complete walk (another replica) leaves the mirror equal to the upstream', async () => {
    const busy = rig.seedBusyEvent(BUSY_LISTINGS);
    const common = {
      SYNC_PAGE_SIZE: String(PAGE_SIZE),
      SYNC_LEASE_TTL_MS: String(LEASE_TTL_MS),
      LISTINGS_FRESH_TIMEOUT_MS: '500',
    };
    // A: the startup sync, then the walk that gets killed. Its hot scheduler is kept away from the event (a
    // long target and floor): the walk under test is the fresh=true read's.
    const a = await rig.spawn({
      ...common,
      SYNC_ENABLED: 'true',
      SYNC_ON_STARTUP: 'true',
      SYNC_HOT_TARGET_MS: '3600000',
      SYNC_HOT_MIN_INTERVAL_MS: '3600000',
    });
    await rig.fullPassCompleted();
    expect(await rig.mirrorOf(busy.eventId)).toEqual(busy.listings);
    // B runs no scheduled pass: only a walk its fresh=true read starts (or joins) can repair the event.
    const b = await rig.spawn({ ...common, SYNC_ENABLED: 'false', LISTINGS_FRESH_TIMEOUT_MS: '20000' });

    rig.sandbox.admin.setFaults([{ operation: 'listings', kind: 'latency', latencyMs: 250 }]);
    // The read answers from the mirror (stale) after 500 ms; the walk goes on in A.
    const read = await rig.get(a, `/v1/events/${busy.eventId}/listings?fresh=true&limit=5`);
    expect(read.status).toBe(200);
    await waitUntil(
      async () => (await rig.walksOf(busy.eventId)).some((w) => w.status === 'running' && w.pages > 0),
      20_000,
      20,
    );
    await rig.kill9(a);
    const [dead] = await rig.walksOf(busy.eventId);
    expect(dead).toMatchObject({ status: 'running', holder: expect.stringContaining(`:${a.child.pid}:`) });
    // Mid-way: some pages written, not all of them.
    expect(dead.pages).toBeGreaterThan(0);
    expect(dead.pages).toBeLessThan(BUSY_LISTINGS / PAGE_SIZE);

    // The upstream changes while nobody walks: listings from the start (already written by the dead walk) and
    // from the end (not reached) cancelled and repriced, new ones listed.
    const tickets = [...busy.listings.keys()];
    for (const t of [tickets[0], tickets[1], tickets[tickets.length - 1]]) await rig.cancel(busy, t);
    for (const t of [tickets[2], tickets[tickets.length - 2]]) await rig.reprice(busy, t, 77_000_000n);
    rig.list(busy, 5_000_000n);
    rig.list(busy, 6_000_000n);
    rig.sandbox.admin.clearFaults();
    expect(differences(await rig.verify())).not.toEqual([]);

    // The dead walk's lease is still held (its TTL has not run out): B's walk waits for it, reaps it, and walks.
    const held = await rig.query<{ live: boolean }>(
      `SELECT expires_at > now() AS live FROM job_leases WHERE name = $1`,
      [`sync:event:${busy.eventId}`],
    );
    expect(held[0]?.live).toBe(true);
    const fresh = await rig.get(b, `/v1/events/${busy.eventId}/listings?fresh=true&limit=100`);
    expect(fresh.status).toBe(200);
    // Answered after a complete walk (not from the mirror marked stale).
    expect(((await fresh.json()) as { stale: boolean }).stale).toBe(false);

    const walks = await rig.walksOf(busy.eventId);
    const reaped = walks.find((w) => w.id === dead.id);
    expect(reaped).toMatchObject({ status: 'failed', error: expect.stringMatching(/abandoned/) });
    expect(walks.filter((w) => w.status === 'running')).toEqual([]);
    const repair = walks.find((w) => w.status === 'completed');
    expect(repair && rig.isHolder(b, repair.holder)).toBe(true);
    // sync:verify's comparison: the mirror (events and listings, every row) equals the upstream.
    expect(differences(await rig.verify())).toEqual([]);
    expect(await rig.mirrorOf(busy.eventId)).toEqual(busy.listings);
  }, 90_000);
});
