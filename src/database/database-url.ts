import { join, resolve } from 'node:path';
import type { DataSource } from 'typeorm';
import type { AppConfig } from '../config/app.config';
import { startEmbeddedPostgres, type RunningPostgres } from './embedded-postgres';

export interface ResolvedDatabase {
  url: string;
  embedded: RunningPostgres | null;
}

export const SERVICE_DATABASE = 'ticket_resale_bff';

/**
 * DATABASE_URL when set; otherwise an embedded PostgreSQL kept under DATA_DIR/postgres, with the
 * service's own database created on first start.
 */
export async function resolveDatabase(
  config: AppConfig,
  onLog?: (line: string) => void,
): Promise<ResolvedDatabase> {
  if (config.DATABASE_URL) return { url: config.DATABASE_URL, embedded: null };
  const embedded = await startEmbeddedPostgres({
    dataDir: join(resolve(config.DATA_DIR), 'postgres'),
    onLog,
  });
  try {
    const url = await ensureDatabase(embedded.url, SERVICE_DATABASE);
    return { url, embedded };
  } catch (error) {
    await embedded.stop();
    throw error;
  }
}

/** Creates `name` on the server behind `adminUrl` if missing; returns the URL of that database. */
export async function ensureDatabase(adminUrl: string, name: string): Promise<string> {
  const { Client } = await import('pg');
  const client = new Client({ connectionString: adminUrl });
  // A connection lost mid-statement also emits 'error' (after the statement rejects): unheard, it would crash
  // the process instead of failing this call.
  client.on('error', () => undefined);
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`);
  } finally {
    await client.end();
  }
  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

/**
 * For one-off commands (migration and key CLIs): opens the service's database (DATABASE_URL, or the
 * embedded cluster: attached when the service runs it, started for the command otherwise), runs `fn`
 * and closes everything again, whatever happens.
 */
export async function withServiceDatabase<T>(
  config: AppConfig,
  createDataSource: (url: string) => DataSource,
  fn: (dataSource: DataSource) => Promise<T>,
): Promise<T> {
  const database = await resolveDatabase(config);
  const dataSource = createDataSource(database.url);
  try {
    await dataSource.initialize();
    return await fn(dataSource);
  } finally {
    if (dataSource.isInitialized) await dataSource.destroy();
    await database.embedded?.stop();
  }
}
