import { randomBytes } from 'node:crypto';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/database/embedded-postgres';

export interface ChaosDatabase {
  /** A fresh, empty database the replicas migrate on start. */
  url: string;
  close(): Promise<void>;
}

async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: url });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/**
 * A fresh database for one chaos run: inside `adminUrl` (DATABASE_URL, a role that may create databases) or,
 * without it, in a throwaway embedded PostgreSQL cluster (src/database/embedded-postgres.ts). close() drops the
 * database, or stops the cluster and removes its directory.
 */
export async function provisionDatabase(adminUrl: string | undefined): Promise<ChaosDatabase> {
  let embedded: RunningPostgres | null = null;
  let dir: string | null = null;
  if (!adminUrl) {
    dir = await mkdtemp(join(tmpdir(), 'bff-chaos-pg-'));
    // As root the cluster runs as the `postgres` user, which must be able to enter this directory.
    await chmod(dir, 0o755);
    embedded = await startEmbeddedPostgres({
      dataDir: join(dir, 'cluster'),
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '200' },
    });
    adminUrl = embedded.url;
  }
  const admin = adminUrl;
  const name = `bff_chaos_${randomBytes(4).toString('hex')}`;
  await withClient(admin, (c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`));
  return {
    url: withDatabase(admin, name),
    close: async () => {
      try {
        await withClient(admin, (c) =>
          c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`),
        );
      } finally {
        if (embedded) await embedded.stop();
        if (dir) await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
