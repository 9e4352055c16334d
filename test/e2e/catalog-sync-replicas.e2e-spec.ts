import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { FaultRule } from '../../src/sandbox/faults/model';
import { OffsetClock } from '../../src/sandbox/sandbox.clock';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import {
  mirrorEvents,
  mirrorListings,
  mirrorTupleFingerprint,
  passes,
  sandboxEvents,
  sandboxListings,
  pgQuery,
  syncServiceEnv,
  walkSandbox,
} from '../support/catalog-mirror';
import { spawnService, waitForExit, type ServiceProcess } from '../support/service-process';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';

const U64_MAX = 18446744073709551615n;
const LEASE_TTL_MS = 1500;

/** About 20% of upstream calls fail (5xx, 429 + Retry-After, connection reset, hang), 10% of pages empty. */
const FAULTS: FaultRule[] = [
  { operation: '*', kind: 'error', status: 503, rate: 0.055 },
  { operation: '*', kind: 'rate_limit', retryAfterSeconds: 1, rate: 0.055 },
  { operation: '*', kind: 'reset', rate: 0.055 },
  { operation: '*', kind: 'hang', rate: 0.055 },
  { operation: 'listings', kind: 'empty_page', rate: 0.1 },
  { operation: 'events', kind: 'empty_page', rate: 0.1 },
  { operation: '*', kind: 'u64_as_number', rate: 0.3 },
];

/**
 * The acceptance run of issue 9: built service processes on one database against a faulty sandbox with
 * 5,000 events and 20,000 listings; one is killed with SIGKILL mid-pass, two more then share the schedule.
 */
describe('catalog sync: kill -9, takeover, two replicas, exact mirror (service processes)', () => {
  const adminUrl = inject('databaseAdminUrl');
  let databaseUrl: string;
  let sandbox: SandboxHandle;
  const running: ServiceProcess[] = [];

  const serviceEnv = (): Record<string, string> =>
    syncServiceEnv(databaseUrl, sandbox, {
      UPSTREAM_READ_TIMEOUT_MS: '800',
      UPSTREAM_MAX_ATTEMPTS: '10',
      UPSTREAM_BACKOFF_BASE_MS: '20',
      UPSTREAM_BACKOFF_MAX_MS: '300',
      UPSTREAM_RETRY_AFTER_CAP_MS: '1500',
      UPSTREAM_BREAKER_THRESHOLD: '1000',
      UPSTREAM_RATE_LIMIT_RPS: '2000',
      UPSTREAM_RATE_LIMIT_MIN_RPS: '100',
      SYNC_EVENTS_INTERVAL_MS: '300',
      SYNC_LISTINGS_INTERVAL_MS: '300',
      SYNC_JITTER_MS: '300',
      SYNC_LEASE_TTL_MS: String(LEASE_TTL_MS),
      SYNC_PAGE_SIZE: '250',
      SYNC_PROGRESS_LOG_MS: '1000',
    });

  const query = pgQuery(() => databaseUrl);

  /** Completed passes of both resources that started after `since` (by any replica). */
  const completedSince = async (
    since: Date,
  ): Promise<{ resource: string; upserted: string; removed: string }[]> =>
    query(
      `SELECT resource, upserted::text, removed::text FROM sync_passes
       WHERE status = 'completed' AND started_at > $1 AND resource IN ('events', 'listings') ORDER BY id`,
      [since],
    );
  const bothCompletedSince = async (since: Date): Promise<boolean> => {
    const done = new Set((await completedSince(since)).map((p) => p.resource));
    return done.has('events') && done.has('listings');
  };

  const sandboxState = async () => {
    sandbox.admin.clearFaults();
    try {
      return {
        events: sandboxEvents(
          await walkSandbox(sandbox.url, sandbox.admin.apiKey, '/indexer/events/upcoming'),
        ),
        listings: sandboxListings(
          await walkSandbox(sandbox.url, sandbox.admin.apiKey, '/indexer/listings/active'),
        ),
      };
    } finally {
      sandbox.admin.setFaults(FAULTS, 'replicas');
    }
  };

  beforeAll(async () => {
    databaseUrl = await createDatabaseFromTemplate(adminUrl);
    sandbox = await startSandbox({
      host: '127.0.0.1',
      port: 0,
      seed: 'sync-replicas',
      events: 5000,
      listings: 20_000,
      clock: new OffsetClock({ frozen: true, startMs: Date.UTC(2030, 0, 1) }),
      faults: FAULTS,
      faultSeed: 'replicas',
    });
  });
  afterAll(async () => {
    for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await sandbox?.close();
    if (databaseUrl) await dropDatabase(adminUrl, databaseUrl);
  });

  it('survives faults, a kill -9 mid-pass and a second replica; mirrors the sandbox exactly; idles at zero writes', async () => {
    // 1. Replica A starts syncing at startup; kill -9 it in the middle of its first listings pass.
    const a = await spawnService(serviceEnv(), 60_000);
    running.push(a);
    await waitUntil(
      async () =>
        (
          await query<{ n: number }>(
            `SELECT count(*)::int AS n FROM sync_passes WHERE resource = 'listings' AND status = 'running' AND pages >= 5`,
          )
        )[0]?.n === 1,
      60_000,
      25,
    );
    a.child.kill('SIGKILL');
    await waitForExit(a.child, 10_000);
    const killedAt = Date.now();
    const [killed] = await query<{ id: string; status: string }>(
      `SELECT id::text, status FROM sync_passes WHERE resource = 'listings' ORDER BY id DESC LIMIT 1`,
    );
    expect(killed?.status).toBe('running');
    // Nothing disappears because of an interrupted pass.
    const removedAfterKill = await query<{ n: number }>(
      `SELECT count(*)::int AS n FROM listings WHERE removed_at IS NOT NULL`,
    );
    expect(removedAfterKill[0]?.n).toBe(0);
    const mirroredBeforeChange = (await mirrorListings(databaseUrl)).map((l) => l.key);

    // 2. The upstream changes while no replica runs: listings cancelled and listed, u64-max values added.
    sandbox.admin.setFaults([{ operation: 'listings', kind: 'inventory_churn', churn: 40, times: 1 }]);
    await walkSandbox(sandbox.url, sandbox.admin.apiKey, '/indexer/listings/active');
    const max = sandbox.admin.createEvent({ eventId: U64_MAX, name: 'The largest event id' });
    sandbox.admin.seedListing({
      eventId: max.eventId,
      ticketId: U64_MAX,
      seller: { kind: 'user', subject: 'seller-max' },
      askPriceMinor: U64_MAX,
    });
    sandbox.admin.setFaults(FAULTS, 'replicas');
    const changedAt = new Date();

    // 3. Two replicas, same schedule: B and C.
    const [b, c] = await Promise.all([
      spawnService(serviceEnv(), 60_000),
      spawnService(serviceEnv(), 60_000),
    ]);
    running.push(b, c);
    await waitUntil(() => bothCompletedSince(changedAt), 150_000, 200);

    // The killed holder's pass was taken over after its lease expired and marked failed.
    const [taken] = await query<{ status: string; error: string; finished_at: Date }>(
      `SELECT status, error, finished_at FROM sync_passes WHERE id = $1`,
      [killed?.id],
    );
    expect(taken?.status).toBe('failed');
    expect(taken?.error).toMatch(/abandoned/);
    expect(taken?.finished_at.getTime()).toBeGreaterThanOrEqual(killedAt + LEASE_TTL_MS / 2 - 50);

    // 4. Row by row, the mirror equals the sandbox (u64 max and JSON-integer ids included).
    const expected = await sandboxState();
    expect(expected.listings.length).toBeGreaterThan(15_000);
    expect(expected.events.length).toBeGreaterThan(4000);
    expect(await mirrorEvents(databaseUrl)).toEqual(expected.events);
    expect(await mirrorListings(databaseUrl)).toEqual(expected.listings);
    const [maxRow] = await query<{ price: string }>(
      `SELECT ask_price_minor::text AS price FROM listings WHERE event_id = $1 AND ticket_id = $1 AND removed_at IS NULL`,
      [U64_MAX.toString()],
    );
    expect(maxRow?.price).toBe(U64_MAX.toString());
    // Exactly the mirrored listings the upstream no longer lists were marked removed (the churn's cancellations).
    const active = new Set(expected.listings.map((l) => l.key));
    const removed = await query<{ key: string }>(
      `SELECT event_id::text || ':' || ticket_id::text AS key FROM listings WHERE removed_at IS NOT NULL`,
    );
    const gone = mirroredBeforeChange.filter((k) => !active.has(k)).sort();
    expect(gone.length).toBeGreaterThan(0);
    expect(removed.map((r) => r.key).sort()).toEqual(gone);

    // 5. With no upstream change (faults still on), further complete passes write zero rows.
    const fingerprint = await mirrorTupleFingerprint(databaseUrl);
    const idleFrom = new Date();
    await waitUntil(() => bothCompletedSince(idleFrom), 150_000, 200);
    expect(await mirrorTupleFingerprint(databaseUrl)).toBe(fingerprint);
    const idle = await completedSince(idleFrom);
    expect(idle.every((p) => p.upserted === '0' && p.removed === '0')).toBe(true);

    // 6. Stop both replicas, then check single flight from the pass records: per resource, no two passes
    // ever overlapped (each started after the previous one finished).
    for (const p of [b, c]) p.child.kill('SIGTERM');
    await Promise.all([waitForExit(b.child, 15_000), waitForExit(c.child, 15_000)]);
    const records = await passes(databaseUrl);
    for (const resource of ['events', 'listings']) {
      const ofResource = records.filter((p) => p.resource === resource);
      expect(ofResource.length).toBeGreaterThan(2);
      const overlaps = ofResource
        .slice(1)
        .map((p, i) => [ofResource[i], p] as const)
        .filter(([previous, p]) => !previous?.finished_at || previous.finished_at > p.started_at);
      expect(overlaps).toEqual([]);
    }
    expect(new Set(records.map((p) => p.holder)).size).toBeGreaterThanOrEqual(2);
    expect(records.filter((p) => p.status === 'running')).toEqual([]);
  }, 420_000);
});
