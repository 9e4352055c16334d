import { describe, expect, inject, it } from 'vitest';
import { CatalogSyncService } from '../../src/catalog-sync/catalog-sync.service';
import { withPg } from '../support/catalog-mirror';
import { startTestApp } from '../support/test-app';
import { dropDatabase } from '../support/test-database';

/**
 * A pass runs on one connection of its own. It used to keep that connection while its closing bookkeeping
 * (lease release, final read of the pass row) took a second one from the pool, so as many concurrent passes
 * as the pool has connections each held one and waited for another: every pass then failed on the pool's
 * acquire timeout, leases stayed held until they expired. Seen in session 3 as a burst of event refreshes
 * (one per confirmed order) running the pool dry under the checkout concurrency test.
 */
describe(CatalogSyncService.name, () => {
  const adminUrl = inject('databaseAdminUrl');
  const POOL = 3;

  it(`${POOL} concurrent event refreshes on a pool of ${POOL} all complete and release their leases`, async () => {
    const t = await startTestApp({ DB_POOL_SIZE: String(POOL) }, { sandbox: { events: 6, listings: 120 } });
    try {
      const sut = t.app.get(CatalogSyncService);
      const eventIds = await sut.start('events', null, 'operator').then(async (started) => {
        await started.done;
        return withPg(t.databaseUrl, async (c) =>
          (
            await c.query<{ id: string }>(`SELECT event_id::text AS id FROM events ORDER BY event_id`)
          ).rows.map((r) => BigInt(r.id)),
        );
      });
      expect(eventIds.length).toBeGreaterThanOrEqual(POOL);

      const started = await Promise.all(
        eventIds.slice(0, POOL).map((id) => sut.start('event_listings', id, 'operator')),
      );
      const passes = await Promise.all(
        started.map((s) => s.done ?? Promise.reject(new Error(`pass ${s.passId} was already running`))),
      );

      expect(passes.map((p) => p.status)).toEqual(Array(POOL).fill('completed'));
      const held = await withPg(t.databaseUrl, async (c) =>
        (
          await c.query<{ name: string }>(
            `SELECT name FROM job_leases WHERE pass_id IS NOT NULL OR expires_at > clock_timestamp()`,
          )
        ).rows.map((r) => r.name),
      );
      expect(held).toEqual([]);
    } finally {
      await t.app.close();
      await t.sandbox.close();
      await dropDatabase(adminUrl, t.databaseUrl);
    }
  }, 60_000);
});
