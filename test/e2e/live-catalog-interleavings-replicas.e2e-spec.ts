import { describe, expect, it } from 'vitest';
import { differences, useLiveCatalogRig, type BusyEvent, type Replica } from '../support/live-catalog-rig';
import { waitUntil } from '../support/wait';

const LISTINGS_PATH = '/indexer/listings/active';
/** Long enough that a pass frozen for a few seconds keeps its lease (no takeover: the interleaving is the test). */
const LEASE_TTL_MS = 30_000;

/** Upstream listing reads a replica made: the walks of one event (`eventId=`) or full passes (no filter). */
const reads = (replica: Replica, kind: 'walk' | 'full'): number =>
  (replica.proxy?.requests ?? []).filter(
    (r) => r.path.startsWith(LISTINGS_PATH) && r.path.includes('eventId=') === (kind === 'walk'),
  ).length;

/** Freezes a replica once its proxy has seen `count` more listing reads of that kind (bounded wait). */
async function freezeAfter(replica: Replica, kind: 'walk' | 'full', count: number): Promise<void> {
  const from = reads(replica, kind);
  await waitUntil(() => reads(replica, kind) >= from + count, 20_000, 2);
  replica.child.kill('SIGSTOP');
}

/**
 * Issue 30's acceptance across processes: a per-event walk (replica A, `?fresh=true`) and a full listings pass
 * (replica B, operator API) over the same busy event, overlapping in time, started in both orders. The older pass
 * is frozen (SIGSTOP) right after it read the event's first pages and before it wrote them; the upstream then
 * changes (a listing cancelled, one repriced, one added: "between"); the newer pass starts on the other replica,
 * more changes follow while both are in flight ("during"); the newer pass completes, then the older one is
 * resumed (SIGCONT) and writes what it read before the changes. Stale-write rules: what the newer pass saw stays
 * (the cancelled listing is not brought back, the old price does not return); after the next complete walk the
 * mirror equals the upstream exactly (sync:verify). test/integration/live-catalog.integration-spec.ts plays every
 * step-level interleaving in one process; this one runs the real passes of two service processes.
 */
describe('live catalog: a per-event walk and a full pass on two replicas, both orders (service processes)', () => {
  const rig = useLiveCatalogRig({ seed: 'live-interleave', events: 1, listings: 5 });
  let a: Replica;
  let b: Replica;
  let busy: BusyEvent;

  const passOf = async (resource: 'listings' | 'event_listings', since: string) =>
    (
      await rig.query<{ id: string; status: string; pages: number; holder: string }>(
        `SELECT id::text, status, pages::int AS pages, holder FROM sync_passes
         WHERE resource = $1 AND id > $2 ORDER BY id LIMIT 1`,
        [resource, since],
      )
    )[0];
  const lastPassId = async (): Promise<string> =>
    (await rig.query<{ id: string }>(`SELECT coalesce(max(id), 0)::text AS id FROM sync_passes`))[0]?.id ??
    '0';

  /** Starts the walk of the event on A (a fresh=true read, answered when the walk ends or after 20 s). */
  const walkOnA = (): Promise<Response> =>
    rig.get(a, `/v1/events/${busy.eventId}/listings?fresh=true&limit=5`, 30_000);
  const fullPassOnB = async (): Promise<void> => {
    const res = await rig.post(b, '/v1/admin/sync', { resource: 'listings' });
    expect(res.status).toBe(202);
  };

  it('sets up two replicas that only sync when asked, and an exact mirror', async () => {
    // The busy event's listings come first in a full pass (the generated catalog is 5 listings).
    busy = rig.seedBusyEvent(60, 'Interleaved');
    const filler = rig.seedBusyEvent(40, 'Filler');
    expect(filler.listings.size).toBe(40);
    const env = {
      SYNC_ENABLED: 'false',
      SYNC_PAGE_SIZE: '10',
      SYNC_LEASE_TTL_MS: String(LEASE_TTL_MS),
      LISTINGS_FRESH_TIMEOUT_MS: '20000',
    };
    [a, b] = await Promise.all([rig.spawn(env, { counted: true }), rig.spawn(env, { counted: true })]);
    const res = await rig.post(b, '/v1/admin/sync', { resource: 'all' });
    expect(res.status).toBe(202);
    await rig.fullPassCompleted();
    await waitUntil(async () => differences(await rig.verify()).length === 0, 20_000, 200);
  }, 90_000);

  for (const order of ['full pass older, walk newer', 'walk older, full pass newer'] as const) {
    it(`${order}: the newer pass's view stands, and the next walk makes the mirror exact`, async () => {
      const fullFirst = order === 'full pass older, walk newer';
      const older = fullFirst ? b : a;
      const tickets = [...busy.listings.keys()];
      // Listings of the event's first page: the older pass has read them when it is frozen.
      const [cancelled, repriced, cancelledDuring, repricedDuring] = tickets;
      const since = await lastPassId();
      rig.sandbox.admin.setFaults([{ operation: 'listings', kind: 'latency', latencyMs: 60 }]);

      // 1. The older pass starts and reads the event's first pages; frozen before its first batch is written.
      const olderRead = fullFirst ? fullPassOnB().then(() => null) : walkOnA();
      await freezeAfter(older, fullFirst ? 'full' : 'walk', 4);
      try {
        const frozen = await passOf(fullFirst ? 'listings' : 'event_listings', since);
        expect(frozen).toMatchObject({ status: 'running', pages: 0 });
        expect(rig.isHolder(older, frozen?.holder ?? '')).toBe(true);

        // 2. Between: the upstream changes before the newer pass starts.
        await rig.cancel(busy, cancelled);
        await rig.reprice(busy, repriced, 99_000_000n);
        const added = rig.list(busy, 2n);

        // 3. The newer pass runs on the other replica; more changes while both are in flight.
        const newerRead = fullFirst ? walkOnA() : fullPassOnB().then(() => null);
        await rig.cancel(busy, cancelledDuring);
        await rig.reprice(busy, repricedDuring, 98_000_000n);
        const addedDuring = rig.list(busy, 3n);
        await newerRead;
        await waitUntil(
          async () =>
            (await passOf(fullFirst ? 'event_listings' : 'listings', since))?.status === 'completed',
          20_000,
          100,
        );

        // 4. The older pass resumes and writes what it read before the changes, then completes.
        older.child.kill('SIGCONT');
        await olderRead;
        await waitUntil(
          async () =>
            (await passOf(fullFirst ? 'listings' : 'event_listings', since))?.status === 'completed',
          20_000,
          100,
        );
        const olderPass = await passOf(fullFirst ? 'listings' : 'event_listings', since);
        expect(olderPass?.pages).toBeGreaterThan(0);

        // What the newer pass saw (the "between" changes) stands: the older pass brought nothing back.
        const mirror = await rig.mirrorOf(busy.eventId);
        expect(mirror.has(cancelled)).toBe(false);
        expect(mirror.get(repriced)).toBe(99_000_000n);
        expect(mirror.get(added)).toBe(2n);

        // 5. The next complete walk: the mirror equals the upstream, "during" changes included.
        rig.sandbox.admin.clearFaults();
        const next = await walkOnA();
        expect(((await next.json()) as { stale: boolean }).stale).toBe(false);
        const diff = differences(await rig.verify());
        // On a difference, the row and the passes since the round began say which write was refused or missed.
        const details =
          diff.length === 0
            ? ''
            : JSON.stringify({
                row: await rig.query(
                  `SELECT ticket_id::text, ask_price_minor::text, removed_at, observed_at, last_seen_pass::text
                   FROM listings WHERE event_id = $1 AND ticket_id = $2`,
                  [busy.eventId.toString(), repricedDuring.toString()],
                ),
                passes: await rig.query(
                  `SELECT id::text, resource, status, trigger, holder, started_at, finished_at, pages::int
                   FROM sync_passes WHERE id > $1 ORDER BY id`,
                  [since],
                ),
              });
        expect(diff.length === 0 ? [] : [...diff, details]).toEqual([]);
        const exact = await rig.mirrorOf(busy.eventId);
        expect(exact).toEqual(busy.listings);
        expect(exact.has(cancelledDuring)).toBe(false);
        expect(exact.get(repricedDuring)).toBe(98_000_000n);
        expect(exact.get(addedDuring)).toBe(3n);
      } finally {
        older.child.kill('SIGCONT');
        rig.sandbox.admin.clearFaults();
      }
    }, 60_000);
  }
});
