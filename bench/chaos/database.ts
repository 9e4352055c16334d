import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/database/embedded-postgres';
import { sleep, waitFor } from './processes';

export interface ChaosDatabase {
  /** A fresh, empty database the replicas migrate on start. */
  url: string;
  /**
   * `pg_ctl restart -m immediate` of the run's own cluster: SIGQUIT to the postmaster (no checkpoint, every
   * client cut), `downMs` with nothing listening, then started again on the same port (crash recovery first).
   * Null with DATABASE_URL: a server the run did not start is not its to restart.
   */
  restart: ((downMs: number) => Promise<void>) | null;
  close(): Promise<void>;
}

/**
 * Throwaway-cluster settings, but `synchronous_commit` stays on: the run stops PostgreSQL immediately, and with
 * it off a commit is acknowledged before its WAL is written, so the last ~200 ms of acknowledged commits vanish
 * in crash recovery (an order answered 202 came back 404 — the cluster's doing, not the service's). fsync and
 * full-page writes guard against an operating-system crash, which the run does not simulate.
 */
const SETTINGS = {
  fsync: 'off',
  synchronous_commit: 'on',
  full_page_writes: 'off',
  max_connections: '200',
  // BENCH_PG_STATS=1: statement statistics of the run (bench/pg-stats.ts prints where the database time went).
  ...(process.env.BENCH_PG_STATS === '1'
    ? { shared_preload_libraries: 'pg_stat_statements', 'pg_stat_statements.track': 'all' }
    : {}),
};

export async function withClient<T>(url: string, fn: (client: Client) => Promise<T>): Promise<T> {
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

/** The postmaster's PID: line 1 of `postmaster.pid`, or null when it is not running. */
export async function postmasterPid(dataDir: string): Promise<number | null> {
  const lockFile = join(dataDir, 'postmaster.pid');
  if (!existsSync(lockFile)) return null;
  const pid = Number.parseInt((await readFile(lockFile, 'utf8')).split('\n')[0] ?? '', 10);
  return Number.isInteger(pid) && pid > 0 ? pid : null;
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A fresh database for one chaos run: inside `adminUrl` (DATABASE_URL, a role that may create databases) or,
 * without it, in a throwaway embedded PostgreSQL cluster (src/database/embedded-postgres.ts) that the run may
 * restart. close() drops the database, or stops the cluster and removes its directory.
 */
export async function provisionDatabase(adminUrl: string | undefined): Promise<ChaosDatabase> {
  let embedded: RunningPostgres | null = null;
  let dir: string | null = null;
  let dataDir = '';
  if (!adminUrl) {
    dir = await mkdtemp(join(tmpdir(), 'bff-chaos-pg-'));
    // As root the cluster runs as the `postgres` user, which must be able to enter this directory.
    await chmod(dir, 0o755);
    dataDir = join(dir, 'cluster');
    embedded = await startEmbeddedPostgres({ dataDir, settings: SETTINGS });
    adminUrl = embedded.url;
  }
  const admin = adminUrl;
  const name = `bff_chaos_${randomBytes(4).toString('hex')}`;
  await withClient(admin, (c) => c.query(`CREATE DATABASE ${c.escapeIdentifier(name)}`));
  const restart = async (downMs: number): Promise<void> => {
    if (!embedded) throw new Error('no cluster of the run to restart');
    const pid = await postmasterPid(dataDir);
    if (pid === null) throw new Error('chaos cluster: no postmaster to stop');
    // By PID, as `pg_ctl stop -m immediate` does: the library's stop() would wait for an exit it already saw.
    process.kill(pid, 'SIGQUIT');
    await waitFor('postmaster gone after SIGQUIT', () => !isAlive(pid), 15_000, 25);
    await sleep(downMs);
    const port = embedded.port;
    embedded = await startEmbeddedPostgres({ dataDir, settings: SETTINGS, port });
  };
  return {
    url: withDatabase(admin, name),
    restart: embedded ? restart : null,
    close: async () => {
      try {
        await withClient(admin, (c) =>
          c.query(`DROP DATABASE IF EXISTS ${c.escapeIdentifier(name)} WITH (FORCE)`),
        );
      } finally {
        // Not when a failed restart left no postmaster: the handle's stop() would wait for an exit already seen.
        const pid = embedded ? await postmasterPid(dataDir) : null;
        if (embedded && pid !== null && isAlive(pid)) await embedded.stop();
        if (dir) await rm(dir, { recursive: true, force: true });
      }
    },
  };
}
