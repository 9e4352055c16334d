import { describe, expect, inject, it } from 'vitest';
import { CatalogSyncService } from '../../src/catalog-sync/catalog-sync.service';
import { withPg } from '../support/catalog-mirror';
import { startTestApp } from '../support/test-app';
import { dropDatabase } from '../support/test-database';

/**
 * A pass whose start overlaps the beginning of shutdown (lease taken and row inserted after the shutdown
 * hook had looked for running passes) was never cancelled: shutdown waited for the whole pass, and a
 * service process hit its shutdown timeout and exited with the pass left `running` (CI caught it once in
 * the replicas run). Shutdown must cancel it too, promptly, and leave it recorded `cancelled`.
 */
describe(CatalogSyncService.name, () => {
  const adminUrl = inject('databaseAdminUrl');

  it.each([0, 1, 5, 50])(
    'shutdown %i ms after a pass starts cancels it promptly and records it cancelled, never running',
    async (delayMs) => {
      // 20 pages at 300 ms each: the pass cannot finish on its own during the shutdown below.
      const t = await startTestApp({ SYNC_PAGE_SIZE: '20' }, { sandbox: { events: 10, listings: 400 } });
      try {
        t.sandbox.admin.setFaults([{ operation: 'listings', kind: 'latency', latencyMs: 300 }]);
        const sut = t.app.get(CatalogSyncService);
        const started = sut.start('listings', null, 'operator').catch((error: unknown) => error);
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        const closing = Date.now();
        await t.app.close();
        const closeMs = Date.now() - closing;
        await started;
        const statuses = await withPg(t.databaseUrl, async (c) =>
          (await c.query<{ status: string }>(`SELECT status FROM sync_passes`)).rows.map((r) => r.status),
        );
        expect(statuses.filter((s) => s !== 'cancelled')).toEqual([]);
        expect(closeMs).toBeLessThan(3000);
      } finally {
        await t.sandbox.close();
        await dropDatabase(adminUrl, t.databaseUrl);
      }
    },
    30_000,
  );
});
