import { describe, expect, it } from 'vitest';
import {
  useLiveCatalogRig,
  type BusyEvent,
  type LiveCatalogRig,
  type Replica,
} from '../support/live-catalog-rig';
import { busiestSecond } from '../support/counting-proxy';
import { waitUntil } from '../support/wait';

/** UPSTREAM_RATE_LIMIT_RPS: the whole service's upstream budget (one replica here: all of it). */
const RPS = 6;
const HOT_EVENTS = 10;
const LISTINGS_PATH = '/indexer/listings/active';

/** A counter's value on a replica's /metrics (the sample with exactly these labels), 0 when absent. */
async function counter(rig: LiveCatalogRig, replica: Replica, sample: string): Promise<number> {
  const text = await (await rig.get(replica, '/metrics')).text();
  const line = text.split('\n').find((l) => l.startsWith(`${sample} `));
  return line === undefined ? 0 : Number(line.slice(sample.length + 1));
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Issue 30's acceptance, a 429 storm: one replica keeps ten read events hot (hot walks paced to its upstream
 * budget, UPSTREAM_RATE_LIMIT_RPS = 6), reached through a counting proxy so the test sees every request the
 * upstream got. For 6 s the sandbox answers 429 (Retry-After: 1) to half of the listing reads. The service backs
 * off: fewer hot walks per second, due walks skipped (for budget or for a slot, counted in the metrics); the upstream never saw
 * more than 6 requests in any one second, before, during or after the storm; no read answered 5xx; and the
 * walks resume once the storm is over.
 */
describe('live catalog: a 429 storm shrinks hot walks within the upstream budget (service process)', () => {
  const rig = useLiveCatalogRig({ seed: 'live-429', events: 4, listings: 20 });

  it('backs off during the storm, never exceeds the budget, answers every read, and resumes after', async () => {
    const events: BusyEvent[] = Array.from({ length: HOT_EVENTS }, (_, i) =>
      rig.seedBusyEvent(5, `Hot ${i}`),
    );
    const r = await rig.spawn(
      {
        SYNC_ENABLED: 'true',
        SYNC_ON_STARTUP: 'true',
        SYNC_HOT_TARGET_MS: '1000',
        SYNC_HOT_MIN_INTERVAL_MS: '200',
        SYNC_HOT_DEMAND_HALF_LIFE_MS: '10000',
        UPSTREAM_RATE_LIMIT_RPS: String(RPS),
        UPSTREAM_RATE_LIMIT_MIN_RPS: '1',
        UPSTREAM_RETRY_AFTER_CAP_MS: '2000',
        LISTINGS_FRESH_TIMEOUT_MS: '1500',
      },
      { counted: true },
    );
    const proxy = r.proxy;
    if (proxy === null) throw new Error('no counting proxy');
    await rig.fullPassCompleted();

    // A reader keeps the ten events hot (plain reads: no upstream call), with a fresh=true read now and then.
    const statuses: number[] = [];
    const stop = new AbortController();
    const reader = (async () => {
      for (let i = 0; !stop.signal.aborted && i < 10_000; i++) {
        const event = events[i % HOT_EVENTS];
        const fresh = i % 25 === 0 ? '&fresh=true' : '';
        const res = await rig
          .get(r, `/v1/events/${event.eventId}/listings?limit=5${fresh}`)
          .catch(() => null);
        statuses.push(res?.status ?? 0);
        await res?.arrayBuffer();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();

    const hotWalksBetween = async (from: Date, to: Date): Promise<number> =>
      (
        await rig.query<{ n: number }>(
          `SELECT count(*)::int AS n FROM sync_passes WHERE resource = 'event_listings' AND trigger = 'hot'
           AND status = 'completed' AND finished_at >= $1 AND finished_at < $2`,
          [from, to],
        )
      )[0]?.n ?? 0;
    // Due walks not started: for want of budget, or of a slot (walks held up by the limiter keep theirs).
    const skippedWalks = async () =>
      (await counter(rig, r, 'catalog_sync_hot_walks_skipped_total{reason="budget"}')) +
      (await counter(rig, r, 'catalog_sync_hot_walks_skipped_total{reason="concurrency"}'));

    try {
      // Calm: the hot walks settle into the budget.
      await waitUntil(async () => (await hotWalksBetween(new Date(0), new Date())) >= 10, 20_000, 200);
      const calmFrom = new Date();
      await pause(4_000);
      const calmTo = new Date();
      const skippedBefore = await skippedWalks();

      // The storm: half the listing reads answer 429 with Retry-After: 1.
      rig.sandbox.admin.setFaults(
        [{ operation: 'listings', kind: 'rate_limit', retryAfterSeconds: 1, rate: 0.5 }],
        'storm',
      );
      const stormFrom = new Date();
      await pause(6_000);
      const stormTo = new Date();
      rig.sandbox.admin.clearFaults();
      const skippedAfter = await skippedWalks();

      // After the storm the walks resume (the limiter recovers a tenth of the rate every quiet 5 s).
      await waitUntil(async () => (await hotWalksBetween(stormTo, new Date())) >= 3, 20_000, 200);

      const calmRate = (await hotWalksBetween(calmFrom, calmTo)) / 4;
      const stormRate = (await hotWalksBetween(stormFrom, stormTo)) / 6;
      const limited = proxy.requests.filter((q) => q.status === 429 && q.path.startsWith(LISTINGS_PATH));
      expect(limited.length).toBeGreaterThan(2);
      // Backed off: at most half the walks per second, and due walks skipped.
      expect(calmRate).toBeGreaterThan(2);
      expect(stormRate).toBeLessThanOrEqual(calmRate / 2);
      expect(skippedAfter).toBeGreaterThan(skippedBefore);
      // The budget, counted on the upstream side of the wire: never more than RPS requests in any second.
      // A loaded machine stamps some arrivals late (two requests 1,050 ms apart on the wire can be stamped closer):
      // stamps within 1000 − (the proxy's worst stamping delay) ms were sent within one second.
      const lateMs = proxy.stampsLateByMs();
      const busiest = busiestSecond(
        proxy.requests.map((q) => q.at),
        1000 - lateMs,
      );
      // The figure the issue asks for, in the run's output (docs/upstream-client.md quotes it).
      console.info(
        `live-catalog-429: ${proxy.requests.length} upstream requests, busiest second ${busiest.count} (budget ${RPS}; stamps late by up to ${lateMs} ms), ${limited.length} answered 429`,
      );
      expect(busiest.count, `busiest second at ${new Date(busiest.at).toISOString()}`).toBeLessThanOrEqual(
        RPS,
      );
    } finally {
      stop.abort();
      await reader;
    }
    // Nothing 5xx (nor a failed connection) from the service, throughout.
    expect(statuses.length).toBeGreaterThan(100);
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  }, 90_000);
});
