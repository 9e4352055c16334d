import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isAlive, postmasterPid } from '../../bench/chaos/database';
import { startEmbeddedPostgres, type RunningPostgres } from '../../src/database/embedded-postgres';
import { waitUntil } from './wait';
import { withAdminClient, withDatabase } from './test-database';

/**
 * A PostgreSQL cluster of one test file's own, for tests that stop and restart it: the shared test cluster
 * serves every other file at the same time, so it must never go down. Same port across restarts, so the
 * app's pool reaches it again by the URL it was given.
 */
export interface OwnCluster {
  /** Admin URL (`postgres` database). */
  readonly url: string;
  /** A database created on it (name contains `test`), empty: the app migrates it at boot. */
  createDatabase(name: string): Promise<string>;
  /** `pg_ctl stop -m immediate`: SIGQUIT to the postmaster (no checkpoint, clients cut), waited for. */
  stopImmediately(): Promise<void>;
  /** Starts it again on the same port (crash recovery runs first: "the database system is starting up"). */
  start(): Promise<void>;
  /** Stops it by its postmaster's PID (bounded) and removes its files. */
  destroy(): Promise<void>;
}

/**
 * `synchronous_commit` stays on: with it off a commit is acknowledged before its WAL is written, and an immediate
 * stop loses the last acknowledged commits in crash recovery — a test would blame the app for the cluster's
 * setting. fsync and full-page writes only matter when the operating system crashes, which no test does.
 */
const SETTINGS = { fsync: 'off', synchronous_commit: 'on', full_page_writes: 'off', max_connections: '100' };

async function killAndWait(pid: number, signal: NodeJS.Signals, timeoutMs: number): Promise<void> {
  if (!isAlive(pid)) return;
  process.kill(pid, signal);
  await waitUntil(() => !isAlive(pid), timeoutMs, 25);
}

export async function startOwnCluster(): Promise<OwnCluster> {
  const parent = await mkdtemp(join(tmpdir(), 'bff-own-pg-'));
  // As root the cluster runs as the `postgres` user, which must be able to enter this directory.
  await chmod(parent, 0o755);
  const dataDir = join(parent, 'cluster');
  const { port, url }: RunningPostgres = await startEmbeddedPostgres({ dataDir, settings: SETTINGS });
  return {
    url,
    async createDatabase(name) {
      await withAdminClient(url, (client) =>
        client.query(`CREATE DATABASE ${client.escapeIdentifier(name)}`),
      );
      return withDatabase(url, name);
    },
    async stopImmediately() {
      const pid = await postmasterPid(dataDir);
      if (pid === null) throw new Error('own cluster: no postmaster to stop');
      // Stopped by PID, not by the library's handle: its stop() would wait for an exit it already saw.
      await killAndWait(pid, 'SIGQUIT', 15_000);
    },
    async start() {
      await startEmbeddedPostgres({ dataDir, settings: SETTINGS, port });
    },
    async destroy() {
      const pid = await postmasterPid(dataDir);
      if (pid !== null) {
        // Fast shutdown by PID; SIGKILL only if it does not go within the bound.
        await killAndWait(pid, 'SIGINT', 15_000).catch(() => killAndWait(pid, 'SIGKILL', 5000));
      }
      await rm(parent, { recursive: true, force: true });
    },
  };
}
