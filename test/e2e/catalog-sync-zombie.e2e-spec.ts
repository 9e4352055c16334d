import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { OffsetClock } from '../../src/sandbox/sandbox.clock';
import { startSandbox, type SandboxHandle } from '../../src/sandbox/sandbox.server';
import {
  mirrorListings,
  pgQuery,
  sandboxListings,
  syncServiceEnv,
  walkSandbox,
} from '../support/catalog-mirror';
import { spawnService, waitForExit, type ServiceProcess } from '../support/service-process';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { waitUntil } from '../support/wait';

const LEASE_TTL_MS = 1500;

/** A durable-work counter of the `sync` queue as the service's /metrics shows it (0 when not counted yet). */
async function syncCounter(service: ServiceProcess, metric: string): Promise<number> {
  const text = await (await fetch(`${service.url}/metrics`)).text();
  const match = new RegExp(`^${metric}\\{queue="sync"\\} (\\d+)`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

/**
 * A zombie sync pass: replica A holds the listings lease and is frozen (SIGSTOP) mid-walk for longer than its
 * lease; replica B takes the lease over (a new fencing token) and completes a pass; A then resumes. The fencing
 * token, checked on the database in every page's transaction and every renewal, must refuse whatever A's pass
 * still tries: A writes nothing after the takeover, its pass stays failed, and the refusal is counted.
 * (catalog-sync.integration-spec.ts checks the lease SQL alone; catalog-sync-replicas kills its holder.)
 */
describe('catalog sync: a paused holder resumes after a takeover and is fenced off (service processes)', () => {
  const adminUrl = inject('databaseAdminUrl');
  let databaseUrl: string;
  let sandbox: SandboxHandle;
  const running: ServiceProcess[] = [];

  const serviceEnv = (): Record<string, string> =>
    syncServiceEnv(databaseUrl, sandbox, {
      // Only the startup passes: later ones would blur which pass wrote what.
      SYNC_EVENTS_INTERVAL_MS: '600000',
      SYNC_LISTINGS_INTERVAL_MS: '600000',
      SYNC_JITTER_MS: '0',
      // A deployment (sandbox process by URL): /metrics is admin-only unless opened.
      METRICS_PUBLIC: 'true',
      SYNC_LEASE_TTL_MS: String(LEASE_TTL_MS),
      SYNC_PAGE_SIZE: '50',
    });

  const query = pgQuery(() => databaseUrl);

  /** The service's connections doing something (a statement or an open transaction) right now. */
  const busyConnections = async (): Promise<number> =>
    (
      await query<{ n: number }>(
        `SELECT count(*)::int AS n FROM pg_stat_activity
         WHERE datname = current_database() AND application_name = 'ticket-resale-bff' AND state <> 'idle'`,
      )
    )[0]?.n ?? -1;

  beforeAll(async () => {
    databaseUrl = await createDatabaseFromTemplate(adminUrl);
    sandbox = await startSandbox({
      host: '127.0.0.1',
      port: 0,
      seed: 'sync-zombie',
      events: 40,
      listings: 2000,
      clock: new OffsetClock({ frozen: true, startMs: Date.UTC(2030, 0, 1) }),
    });
  });
  afterAll(async () => {
    // SIGKILL also ends a stopped process.
    for (const p of running) if (p.child.exitCode === null) p.child.kill('SIGKILL');
    await sandbox?.close();
    if (databaseUrl) await dropDatabase(adminUrl, databaseUrl);
  });

  it('B takes the lease over from a frozen A; A resumes, writes nothing more, and is counted as fenced', async () => {
    // 1. A walks slowly (250 ms a page, 40 pages); freeze it between two of its transactions, a few pages in.
    sandbox.admin.setFaults([{ operation: 'listings', kind: 'latency', latencyMs: 250 }]);
    const a = await spawnService(serviceEnv(), 60_000);
    running.push(a);
    await waitUntil(
      async () =>
        (
          await query<{ n: number }>(
            `SELECT count(*)::int AS n FROM sync_passes WHERE resource = 'listings' AND status = 'running' AND pages >= 2`,
          )
        )[0]?.n === 1,
      60_000,
      25,
    );
    // Frozen inside a page's transaction, A would hold the lease row FOR SHARE and B's takeover would rightly
    // wait for that write to commit. The scenario here is a holder frozen between transactions: freeze again.
    let frozen = false;
    for (let attempt = 0; attempt < 40 && !frozen; attempt++) {
      a.child.kill('SIGSTOP');
      await new Promise((r) => setTimeout(r, 100));
      frozen = (await busyConnections()) === 0 && (await busyConnections()) === 0;
      if (!frozen) {
        a.child.kill('SIGCONT');
        await new Promise((r) => setTimeout(r, 30 + attempt * 7));
      }
    }
    expect(frozen).toBe(true);
    const [zombie] = await query<{ id: string; pages: number; holder: string; token: string }>(
      `SELECT id::text, pages::int, holder, fencing_token::text AS token FROM sync_passes
       WHERE resource = 'listings' AND status = 'running'`,
    );
    if (!zombie) throw new Error('no running listings pass to freeze');
    expect(zombie.pages).toBeGreaterThanOrEqual(2);
    expect(zombie.pages).toBeLessThan(40);

    // 2. A's lease expires on the database clock; B starts and its startup pass takes the lease over.
    await waitUntil(
      async () =>
        (
          await query<{ expired: boolean }>(
            `SELECT expires_at < clock_timestamp() AS expired FROM job_leases WHERE name = 'sync:listings'`,
          )
        )[0]?.expired ?? false,
      10_000,
      50,
    );
    sandbox.admin.clearFaults();
    const b = await spawnService(serviceEnv(), 60_000);
    running.push(b);
    await waitUntil(
      async () =>
        (
          await query<{ n: number }>(
            `SELECT count(*)::int AS n FROM sync_passes
             WHERE resource = 'listings' AND status = 'completed' AND holder <> $1`,
            [zombie.holder],
          )
        )[0]?.n === 1,
      60_000,
      100,
    );
    const [takeover] = await query<{ at: Date; token: string; passes: number }>(
      `SELECT p.started_at AS at, p.fencing_token::text AS token,
         (SELECT count(*)::int FROM sync_passes WHERE resource = 'listings') AS passes
       FROM sync_passes p WHERE p.resource = 'listings' AND p.status = 'completed'`,
    );
    if (!takeover) throw new Error('B completed no listings pass');
    expect(BigInt(takeover.token)).toBe(BigInt(zombie.token) + 1n);
    expect(await syncCounter(b, 'durable_work_expired_leases_total')).toBe(1);

    // 3. A resumes: its renewal and its next page write find the token replaced.
    a.child.kill('SIGCONT');
    await waitUntil(async () => (await syncCounter(a, 'durable_work_fenced_total')) >= 1, 20_000, 100);
    await waitUntil(() => /sync pass failed/.test(a.output()), 10_000, 50);
    expect(a.output()).toMatch(/fenced off \(lease lost\)/);

    // A wrote nothing after the takeover: no page counted, no row stamped with its pass since then.
    const [after] = await query<{ pages: number; status: string; error: string }>(
      `SELECT pages::int, status, error FROM sync_passes WHERE id = $1`,
      [zombie.id],
    );
    expect(after?.pages).toBe(zombie.pages);
    expect(after?.status).toBe('failed');
    expect(after?.error).toMatch(/abandoned/);
    const late = await query<{ n: number }>(
      `SELECT count(*)::int AS n FROM listings WHERE last_seen_pass = $1 AND last_seen_at >= $2`,
      [zombie.id, takeover.at],
    );
    expect(late[0]?.n).toBe(0);
    // No third pass ran, and the mirror is exactly what B's pass left: the sandbox's listings.
    expect(takeover.passes).toBe(2);
    expect(
      (
        await query<{ n: number }>(`SELECT count(*)::int AS n FROM sync_passes WHERE resource = 'listings'`)
      )[0]?.n,
    ).toBe(2);
    const expected = sandboxListings(
      await walkSandbox(sandbox.url, sandbox.admin.apiKey, '/indexer/listings/active'),
    );
    expect(expected.length).toBe(2000);
    expect(await mirrorListings(databaseUrl)).toEqual(expected);

    for (const p of [a, b]) p.child.kill('SIGTERM');
    await Promise.all([waitForExit(a.child, 15_000), waitForExit(b.child, 15_000)]);
  }, 180_000);
});
