import { spawnSync } from 'node:child_process';
import request from 'supertest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { buildDataSourceOptions, createDataSource } from '../../src/database/data-source';
import { MIGRATIONS } from '../../src/database/migrations';
import { startTestApp } from '../support/test-app';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';

/** `npm run migration:*` without the build step (dist is built by the integration global setup). */
function migrationCli(command: string, databaseUrl: string): { code: number | null; out: string } {
  const result = spawnSync(process.execPath, ['dist/src/database/migration.cli.js', command], {
    env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', DATABASE_URL: databaseUrl },
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: result.status, out: `${result.stdout}${result.stderr}` };
}

async function appliedMigrations(url: string): Promise<string[]> {
  const dataSource = createDataSource({ url, poolSize: 1 });
  await dataSource.initialize();
  try {
    const exists = await dataSource.query<{ t: string | null }[]>(`SELECT to_regclass('migrations') AS t`);
    if (!exists[0]?.t) return [];
    const rows = await dataSource.query<{ name: string }[]>('SELECT name FROM migrations ORDER BY id');
    return rows.map((r) => r.name);
  } finally {
    await dataSource.destroy();
  }
}

describe('migrations (real PostgreSQL)', () => {
  const adminUrl = inject('databaseAdminUrl');
  let emptyUrl: string;
  beforeAll(async () => {
    emptyUrl = await createDatabaseFromTemplate(adminUrl, 'template0');
  });
  afterAll(async () => {
    await dropDatabase(adminUrl, emptyUrl);
  });

  it('the data source never synchronizes and runs the registered migrations only when asked', () => {
    const sut = buildDataSourceOptions({ url: emptyUrl });
    expect(sut).toMatchObject({ synchronize: false, migrationsRun: false, migrations: MIGRATIONS });
    expect(buildDataSourceOptions({ url: emptyUrl, migrationsRun: true }).migrationsRun).toBe(true);
  });

  it('the migration CLI shows, runs and reverts migrations on the same data source as the service', async () => {
    const names = MIGRATIONS.map((m) => m.name);
    expect(migrationCli('show', emptyUrl)).toMatchObject({
      code: 1,
      out: expect.stringContaining('pending'),
    });
    const run = migrationCli('run', emptyUrl);
    expect(run.code).toBe(0);
    expect(await appliedMigrations(emptyUrl)).toEqual(names);
    expect(migrationCli('show', emptyUrl).code).toBe(0);
    expect(migrationCli('revert', emptyUrl).code).toBe(0);
    expect(await appliedMigrations(emptyUrl)).toEqual(names.slice(0, -1));
    // show names what is pending.
    expect(migrationCli('show', emptyUrl)).toMatchObject({
      code: 1,
      out: expect.stringContaining(`1 pending migration(s):\n  ${names.at(-1)}`),
    });
    expect(migrationCli('run', emptyUrl).code).toBe(0);
    expect(await appliedMigrations(emptyUrl)).toEqual(names);
    expect(migrationCli('sideways', emptyUrl).code).toBe(2);
  });

  it('MIGRATIONS_RUN=false leaves an empty database alone and readiness names the pending migrations', async () => {
    const t = await startTestApp({ MIGRATIONS_RUN: 'false' }, { emptyDatabase: true });
    try {
      expect(await appliedMigrations(t.databaseUrl)).toEqual([]);
      const res = await request(t.app.getHttpServer()).get('/health/ready').expect(503);
      expect(res.body.error.message).toContain('migrations');
      expect(res.body.error.details.details.migrations.status).toBe('down');
    } finally {
      await t.close();
    }
  });

  it('migrations run at startup by default', async () => {
    const t = await startTestApp({}, { emptyDatabase: true });
    try {
      expect(await appliedMigrations(t.databaseUrl)).toEqual(MIGRATIONS.map((m) => m.name));
      await request(t.app.getHttpServer()).get('/health/ready').expect(200);
    } finally {
      await t.close();
    }
  });
});
