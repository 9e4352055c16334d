import { execFileSync } from 'node:child_process';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { createDataSource } from '../../src/database/data-source';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/database/embedded-postgres';
import { assertTestDatabaseName, TEMPLATE_DATABASE, withAdminClient, withDatabase } from './test-database';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Connection URL with rights to create databases (embedded cluster, or DATABASE_URL). */
    databaseAdminUrl: string;
  }
}

/**
 * Once per run: a real PostgreSQL (embedded unless DATABASE_URL is set), a template database migrated
 * once, and a fresh build of dist/ for the tests that start the service as a process.
 */
export async function setup(project: TestProject): Promise<() => Promise<void>> {
  execFileSync(process.execPath, ['node_modules/typescript/bin/tsc', '-p', 'tsconfig.build.json'], {
    stdio: 'inherit',
  });
  let embedded: RunningPostgres | null = null;
  let clusterDir: string | null = null;
  let adminUrl = process.env.DATABASE_URL;
  if (adminUrl) {
    assertTestDatabaseName(adminUrl);
  } else {
    clusterDir = await mkdtemp(join(tmpdir(), 'bff-test-pg-'));
    // As root the cluster runs as the `postgres` user, which must be able to enter this directory.
    await chmod(clusterDir, 0o755);
    embedded = await startEmbeddedPostgres({
      dataDir: join(clusterDir, 'cluster'),
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
    });
    adminUrl = embedded.url;
  }
  const admin = adminUrl;
  await withAdminClient(admin, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${TEMPLATE_DATABASE} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${TEMPLATE_DATABASE}`);
  });
  const dataSource = createDataSource({ url: withDatabase(admin, TEMPLATE_DATABASE), poolSize: 1 });
  await dataSource.initialize();
  await dataSource.runMigrations({ transaction: 'each' });
  await dataSource.destroy();
  project.provide('databaseAdminUrl', admin);

  return async () => {
    if (embedded) await embedded.stop();
    if (clusterDir) await rm(clusterDir, { recursive: true, force: true });
  };
}
