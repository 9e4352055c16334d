import { randomBytes } from 'node:crypto';
import { Client } from 'pg';
import { DataSource, type DataSourceOptions } from 'typeorm';
import { buildDataSourceOptions } from '../../src/database/data-source';

export const TEMPLATE_DATABASE = 'bff_test_template';

/** Never let a test suite create, migrate or drop anything in a database not named for tests. */
export function assertTestDatabaseName(url: string): void {
  const name = new URL(url).pathname.replace(/^\//, '');
  if (!name.includes('test')) {
    throw new Error(`refusing to run tests against database "${name}": its name must contain "test"`);
  }
}

export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

export async function withAdminClient<T>(adminUrl: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: adminUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** A fresh, fully migrated database for one test file: a copy of the template made in global setup. */
export async function createDatabaseFromTemplate(
  adminUrl: string,
  template = TEMPLATE_DATABASE,
): Promise<string> {
  const name = `bff_test_${process.pid}_${randomBytes(4).toString('hex')}`;
  await withAdminClient(adminUrl, async (client) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(
          `CREATE DATABASE ${client.escapeIdentifier(name)} TEMPLATE ${client.escapeIdentifier(template)}`,
        );
        return;
      } catch (error) {
        // Two files copying the template at the same instant can collide ("being accessed by other users").
        if (attempt >= 10) throw error;
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
  });
  const url = withDatabase(adminUrl, name);
  assertTestDatabaseName(url);
  return url;
}

export async function dropDatabase(adminUrl: string, url: string): Promise<void> {
  assertTestDatabaseName(url);
  const name = new URL(url).pathname.replace(/^\//, '');
  await withAdminClient(adminUrl, (client) =>
    client.query(`DROP DATABASE IF EXISTS ${client.escapeIdentifier(name)} WITH (FORCE)`),
  );
}

/** A test file's own database (a fresh copy of the template) and a data source on it; close() drops both. */
export interface TestDataSource {
  dataSource: DataSource;
  close(): Promise<void>;
}

export async function openTestDataSource(
  adminUrl: string,
  options: { poolSize?: number; entities?: DataSourceOptions['entities'] } = {},
): Promise<TestDataSource> {
  const url = await createDatabaseFromTemplate(adminUrl);
  const dataSource = new DataSource({
    ...buildDataSourceOptions({ url, poolSize: options.poolSize }),
    entities: options.entities ?? [],
  });
  await dataSource.initialize();
  return {
    dataSource,
    close: async () => {
      await dataSource.destroy();
      await dropDatabase(adminUrl, url);
    },
  };
}

/** One API client row granted `scope`, for repository tests whose rows belong to a client; its id. */
export async function insertTestClient(dataSource: DataSource, scope: string): Promise<string> {
  const [row] = await dataSource.query<{ id: string }[]>(
    `INSERT INTO api_clients (name, key_prefix, key_hash, scopes)
     VALUES ('t', 'trb_live_abcdefghij', decode(repeat('ab', 32), 'hex'), ARRAY[$1]) RETURNING id`,
    [scope],
  );
  return row.id;
}
