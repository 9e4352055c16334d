import { Client } from 'pg';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { ProcessGroup } from '../../bench/chaos/processes';
import { SandboxProcess } from '../../bench/chaos/sandbox-process';
import { replicaEnv } from '../../bench/chaos/service-env';
import { ServiceReplica } from '../../bench/chaos/service-replica';
import { generateApiKey } from '../../src/auth/api-key';
import { MIGRATIONS } from '../../src/database/migrations';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

/**
 * Two real service processes booting at once on one EMPTY database, each with MIGRATIONS_RUN=true (the
 * default): the boot path's migrations hold the advisory lock (src/database/migration-lock.ts), so both come
 * up ready, every migration is recorded once and the CONCURRENTLY-built index is there and valid.
 */
describe('Migrations at boot on two replicas at once (e2e, real processes)', () => {
  const group = new ProcessGroup();
  const adminUrl = inject('databaseAdminUrl');
  let sandbox: SandboxProcess;
  let databaseUrl = '';

  beforeAll(async () => {
    sandbox = await SandboxProcess.start(group, { seed: 'migrations-replicas' });
    databaseUrl = await createDatabaseFromTemplate(adminUrl, 'template0');
  }, 60_000);
  afterAll(async () => {
    await group.stopAll();
    if (databaseUrl) await dropDatabase(adminUrl, databaseUrl);
  });

  it('both come up ready; each migration ran exactly once; orders_buyer_open_idx is valid', async () => {
    const env = replicaEnv({
      databaseUrl,
      sandboxUrl: sandbox.url,
      apiKey: generateApiKey(),
      extra: { SYNC_ENABLED: 'false', SYNC_ON_STARTUP: 'false' },
    });
    const replicas = [
      await ServiceReplica.create('migrate-a', group, env),
      await ServiceReplica.create('migrate-b', group, env),
    ];
    await Promise.all(replicas.map((r) => r.start({}, 90_000)));
    for (const r of replicas) {
      // Up at the first try: no migration failed and was retried by TypeORM's connection retry (without the
      // lock the loser of the race fails with "relation … already exists" and comes up only on a retry).
      expect(r.output()).not.toMatch(/Unable to connect to the database|already exists|deadlock/);
      const res = await fetch(`${r.url}/health/ready`);
      expect({ replica: r.name, status: res.status }).toEqual({ replica: r.name, status: 200 });
    }

    const client = new Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const rows = await client.query<{ name: string }>('SELECT name FROM migrations ORDER BY id');
      expect(rows.rows.map((r) => r.name)).toEqual(MIGRATIONS.map((m) => m.name));
      const index = await client.query<{ valid: boolean }>(
        `SELECT i.indisvalid AS valid FROM pg_index i WHERE i.indexrelid = 'orders_buyer_open_idx'::regclass`,
      );
      expect(index.rows).toEqual([{ valid: true }]);
    } finally {
      await client.end();
    }
  }, 120_000);
});
