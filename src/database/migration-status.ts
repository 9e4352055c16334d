import type { DataSource } from 'typeorm';

export interface MigrationStatus {
  /** How many migrations the database records as applied. */
  applied: number;
  /** Names of the migrations the code knows that the database has not applied, in order. */
  pending: string[];
}

const UNDEFINED_TABLE = '42P01';

/** Which known migrations are applied; a database without the migrations table has applied none. */
export async function migrationStatus(dataSource: DataSource): Promise<MigrationStatus> {
  const table = dataSource.options.migrationsTableName ?? 'migrations';
  const rows: { name: string }[] = await dataSource
    .query(`SELECT name FROM "${table}"`)
    .catch((error: { code?: string; driverError?: { code?: string } }) => {
      if ((error.code ?? error.driverError?.code) === UNDEFINED_TABLE) return [];
      throw error;
    });
  const applied = new Set(rows.map((r) => r.name));
  const pending = dataSource.migrations
    .map((m) => m.name ?? m.constructor.name)
    .filter((n) => !applied.has(n));
  return { applied: applied.size, pending };
}
