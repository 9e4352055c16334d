import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { sleep } from '../../bench/chaos/processes';
import type { ServiceReplica } from '../../bench/chaos/service-replica';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import { CountingProxy } from '../support/counting-proxy';
import { TwoReplicas } from '../support/two-replicas';
import { waitUntil } from '../support/wait';

/** The client's budget of key-only routes (`GET /v1/me`) per window; the window outlasts the test. */
const CLIENT_BUDGET = 40;
/** UPSTREAM_RATE_LIMIT_RPS: the upstream request budget of the whole service. */
const UPSTREAM_RPS = 20;
const HEARTBEAT_MS = 200;
const DEAD_AFTER_MS = 15 * HEARTBEAT_MS;
/** Concurrent live re-reads kept going against each replica while the upstream rate is measured. */
const LOAD_PER_REPLICA = 8;
const LISTINGS_PATH = '/indexer/listings/active';

/** A metric's value on a replica's /metrics (first sample of that name), or null when absent. */
async function metric(url: string, name: string): Promise<number | null> {
  const text = await (await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\S+)$`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

/**
 * Budgets across replicas (issue 23, item 6): two real service processes on one database. A client's rate limit
 * and the upstream request rate hold for the service as a whole (±10 %), not per process; a 429 one replica gets
 * from the upstream lowers the other's rate too. Each replica reaches the sandbox through its own counting proxy,
 * so the test sees what the upstream saw from each.
 */
describe('budgets across two replicas (e2e: two service processes on one database)', () => {
  const replicas = new TwoReplicas(inject('databaseAdminUrl'));
  const apiKey = replicas.apiKey;
  let sandbox: SandboxHandle;
  let proxyA: CountingProxy;
  let proxyB: CountingProxy;
  let a: ServiceReplica;
  let b: ServiceReplica;
  let listingPath = '';

  beforeAll(async () => {
    sandbox = await startSandbox({ host: '127.0.0.1', port: 0, seed: 'budgets', events: 3, listings: 30 });
    const { eventId } = sandbox.admin.createEvent();
    const listing = sandbox.admin.seedListing({
      eventId,
      seller: { kind: 'user', subject: 'budget-seller' },
      askPriceMinor: 1_000n,
    });
    listingPath = `/v1/listings/${listing.event_id}/${listing.ticket_id}?fresh=true`;
    proxyA = await CountingProxy.start(sandbox.url);
    proxyB = await CountingProxy.start(sandbox.url);
    // Each replica counts the other (heartbeats every 200 ms) before any budget is measured.
    ({ a, b } = await replicas.start({
      name: 'budgets',
      upstreamUrl: (replica) => (replica === 'a' ? proxyA : proxyB).url,
      waitLiveMs: 15_000,
      extra: {
        UPSTREAM_API_KEY: sandbox.admin.apiKey,
        SYNC_ENABLED: 'false',
        // A deployment (sandbox process by URL): /metrics is admin-only unless opened.
        METRICS_PUBLIC: 'true',
        SYNC_ON_STARTUP: 'false',
        RATE_LIMIT_WINDOW_MS: '600000',
        RATE_LIMIT_DEFAULT: String(CLIENT_BUDGET),
        RATE_LIMIT_CATALOG_READ: '100000',
        UPSTREAM_RATE_LIMIT_RPS: String(UPSTREAM_RPS),
        UPSTREAM_RATE_LIMIT_MIN_RPS: '2',
        UPSTREAM_RETRY_AFTER_CAP_MS: '5000',
        REPLICA_HEARTBEAT_MS: String(HEARTBEAT_MS),
        // 15 heartbeats: a stall of a loaded machine does not drop a live replica (and hand the other its share).
        REPLICA_DEAD_AFTER_MS: String(DEAD_AFTER_MS),
      },
    }));
  }, 180_000);

  afterAll(async () => {
    await replicas.stop();
    await proxyA?.close();
    await proxyB?.close();
    await sandbox?.close();
  });

  it(`a client alternating between the replicas gets its budget of ${CLIENT_BUDGET} per window (±10 %), not twice it`, async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 3 * CLIENT_BUDGET; i++) {
      const replica = i % 2 === 0 ? a : b;
      const res = await fetch(`${replica.url}/v1/me`, {
        headers: { authorization: `Bearer ${apiKey}` },
        signal: AbortSignal.timeout(10_000),
      });
      await res.arrayBuffer();
      statuses.push(res.status);
    }
    const accepted = statuses.filter((s) => s === 200).length;
    expect(statuses.filter((s) => s !== 200 && s !== 429)).toEqual([]);
    expect(accepted).toBeGreaterThanOrEqual(Math.floor(CLIENT_BUDGET * 0.9));
    expect(accepted).toBeLessThanOrEqual(Math.ceil(CLIENT_BUDGET * 1.1));
  });

  it(`the upstream sees the configured ${UPSTREAM_RPS} requests/s from the two replicas together (±10 %)`, async () => {
    const started = Date.now();
    const until = started + 8_000;
    const worker = async (url: string): Promise<void> => {
      while (Date.now() < until) {
        const res = await fetch(`${url}${listingPath}`, {
          headers: { authorization: `Bearer ${apiKey}` },
          signal: AbortSignal.timeout(15_000),
        }).catch(() => null);
        await res?.arrayBuffer();
      }
    };
    await Promise.all(
      [a, b].flatMap((replica) => Array.from({ length: LOAD_PER_REPLICA }, () => worker(replica.url))),
    );
    // Steady state: after the first seconds (each bucket starts full: one second of burst).
    const from = started + 3_000;
    const to = started + 8_000;
    const seen = proxyA.count(from, to, LISTINGS_PATH) + proxyB.count(from, to, LISTINGS_PATH);
    // The limiter lets RPS requests onto the wire per 1,050 ms (its window allows 50 ms of arrival jitter), so the
    // rate it gives is that much under RPS per second; ±10 % of each end.
    expect(seen).toBeGreaterThanOrEqual(((UPSTREAM_RPS * (to - from)) / 1050) * 0.9);
    expect(seen).toBeLessThanOrEqual(((UPSTREAM_RPS * (to - from)) / 1000) * 1.1);
  });

  it("a 429 replica A gets from the upstream lowers replica B's rate and pauses B for its Retry-After", async () => {
    const shareOfB = await metric(b.url, 'upstream_rate_limit_per_second');
    expect(shareOfB).toBe(UPSTREAM_RPS / 2);
    // Let A's and B's limiters refill, so any wait below is the pause, not pacing.
    await sleep(2_000);
    sandbox.admin.addFault({ operation: 'listings', kind: 'rate_limit', retryAfterSeconds: 3, times: 1 });
    const throttled = fetch(`${a.url}${listingPath}`, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(15_000),
    });
    await waitUntil(() => proxyA.requests.some((r) => r.status === 429), 5_000, 20);
    const limited = proxyA.requests.find((r) => r.status === 429);
    await waitUntil(
      async () => ((await metric(b.url, 'upstream_rate_limit_per_second')) ?? Infinity) <= shareOfB! / 2,
      5_000,
      50,
    );
    // B learned of it within a few heartbeats, and B's next upstream request waits out the Retry-After.
    const before = proxyB.requests.length;
    const res = await fetch(`${b.url}${listingPath}`, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(15_000),
    });
    await res.arrayBuffer();
    const next = proxyB.requests[before];
    expect(next).toBeDefined();
    expect(next.at).toBeGreaterThanOrEqual(limited!.answeredAt + 3_000 - 300);
    expect([200, 404]).toContain((await throttled).status);
  });

  it('a replica stopped gracefully stops counting at once; one killed with -9 once its heartbeat is too old; the survivor then has the whole budget', async () => {
    const db = new Client({ connectionString: replicas.databaseUrl });
    await db.connect();
    try {
      const rows = async () =>
        (
          await db.query<{ instance_id: string; stopped: boolean }>(
            `SELECT instance_id, stopped_at IS NOT NULL AS stopped FROM service_replicas ORDER BY started_at`,
          )
        ).rows;
      const live = (url: string) => metric(url, 'service_replicas_live');
      await b.stop();
      expect((await rows()).map((r) => r.stopped)).toEqual([false, true]);
      await waitUntil(async () => (await live(a.url)) === 1, 5_000, 50);
      await b.start();
      await waitUntil(async () => (await live(a.url)) === 2 && (await live(b.url)) === 2, 15_000, 50);
      await b.kill9();
      await waitUntil(async () => (await live(a.url)) === 1, DEAD_AFTER_MS + 10_000, 50);
      // Dropped by the cut-off: nothing marked it stopped.
      expect((await rows()).map((r) => r.stopped)).toEqual([false, true, false]);
      // A counted 20 of this client's requests (its half); alone, it lets the rest of the 40 through.
      const statuses: number[] = [];
      for (let i = 0; i < 30; i++) {
        const res = await fetch(`${a.url}/v1/me`, {
          headers: { authorization: `Bearer ${apiKey}` },
          signal: AbortSignal.timeout(10_000),
        });
        await res.arrayBuffer();
        statuses.push(res.status);
      }
      expect(statuses.filter((s) => s === 200).length).toBe(CLIENT_BUDGET / 2);
    } finally {
      await db.end();
    }
  }, 90_000);
});
