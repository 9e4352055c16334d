import type { Pool } from 'pg';
import type { DataSource, DataSourceOptions } from 'typeorm';
import { MigratingDataSource, type MigrationHooks } from './migration-lock';
import { MIGRATIONS } from './migrations';

/** How long a statement waits for a pooled connection before the pool gives up (→ 503 DATABASE_BUSY). */
export const DB_ACQUIRE_TIMEOUT_MS = 5000;

export interface DatabaseSettings {
  url: string;
  poolSize?: number;
  migrationsRun?: boolean;
  applicationName?: string;
}

/** The one definition of the TypeORM data source, shared by the service and the migration CLI. */
export function buildDataSourceOptions(settings: DatabaseSettings): DataSourceOptions {
  return {
    type: 'postgres',
    url: settings.url,
    synchronize: false,
    migrationsRun: settings.migrationsRun ?? false,
    migrations: MIGRATIONS,
    migrationsTableName: 'migrations',
    migrationsTransactionMode: 'each',
    logging: false,
    applicationName: settings.applicationName ?? 'ticket-resale-bff',
    extra: {
      max: settings.poolSize ?? 10,
      connectionTimeoutMillis: DB_ACQUIRE_TIMEOUT_MS,
      // A statement that runs longer than this is a bug or a lock pile-up, not a slow page. Migration runs
      // lift it for their own session (migration-lock.ts).
      statement_timeout: 30_000,
    },
  };
}

/** The data source every migration path uses: its runs and reverts hold the migration lock (migration-lock.ts). */
export function createDataSource(settings: DatabaseSettings, hooks?: MigrationHooks): DataSource {
  return new MigratingDataSource(buildDataSourceOptions(settings), hooks);
}

/**
 * The pg pool behind a TypeORM data source (present once it is initialized). In the app only DatabaseModule
 * calls it (the PG_POOL provider every raw-SQL user injects); the CLIs and tests that own a data source of
 * their own call it directly.
 */
export function pgPool(dataSource: DataSource): Pool {
  return (dataSource.driver as unknown as { master: Pool }).master;
}
