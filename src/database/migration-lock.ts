import {
  DataSource,
  MigrationExecutor,
  type DataSourceOptions,
  type Migration,
  type QueryRunner,
} from 'typeorm';
import { repairInvalidIndexes, type IndexRepair } from './invalid-indexes';

/**
 * The session-level advisory lock every migration run holds, in the two-key form: that key space is separate
 * from the one-key `pg_advisory_xact_lock(bigint)` checkout takes per buyer, so no hash can collide with it.
 * 1835624306 is "migr" in ASCII.
 */
export const MIGRATION_LOCK = { classid: 1835624306, objid: 1 } as const;

/**
 * How long a runner waits for another one to finish. A CONCURRENTLY build on a large table takes minutes, so
 * this is generous; past it the run fails naming the holder instead of waiting forever.
 */
export const MIGRATION_LOCK_WAIT_MS = 15 * 60_000;

/** How often a waiting runner tries the lock again. */
const LOCK_POLL_MS = 250;

export class MigrationLockTimeoutError extends Error {
  readonly code = 'MIGRATION_LOCK_TIMEOUT';
  constructor(waitedMs: number, holder: string) {
    super(`timed out after ${waitedMs} ms waiting for the migration lock (held by ${holder})`);
    this.name = 'MigrationLockTimeoutError';
  }
}

export interface MigrationHooks {
  /** Called for each invalid index a run rebuilt or dropped (the service logs it, the CLI prints it). */
  onIndexRepaired?: (repair: IndexRepair) => void;
  /** Overrides MIGRATION_LOCK_WAIT_MS (tests). */
  lockWaitMs?: number;
}

type RunOptions = { transaction?: 'all' | 'none' | 'each'; fake?: boolean };

/**
 * The service's data source: TypeORM's, except that every migration run and revert — at boot
 * (`migrationsRun`), from the CLI, in the tests' template — happens on one dedicated connection holding
 * MIGRATION_LOCK. TypeORM itself takes no lock, so replicas booting together would each apply the pending
 * migrations; under the lock the others wait, then find nothing pending.
 */
export class MigratingDataSource extends DataSource {
  constructor(
    options: DataSourceOptions,
    private readonly hooks: MigrationHooks = {},
  ) {
    super(options);
  }

  override runMigrations(options?: RunOptions): Promise<Migration[]> {
    return this.underMigrationLock(async (runner) => {
      const executor = new MigrationExecutor(this, runner);
      executor.transaction = options?.transaction ?? this.options.migrationsTransactionMode ?? 'all';
      executor.fake = options?.fake ?? false;
      const applied = await executor.executePendingMigrations();
      for (const repair of await repairInvalidIndexes(runner)) this.hooks.onIndexRepaired?.(repair);
      return applied;
    });
  }

  override undoLastMigration(options?: RunOptions): Promise<void> {
    return this.underMigrationLock(async (runner) => {
      const executor = new MigrationExecutor(this, runner);
      executor.transaction = options?.transaction ?? 'all';
      executor.fake = options?.fake ?? false;
      await executor.undoLastMigration();
    });
  }

  private async underMigrationLock<T>(fn: (runner: QueryRunner) => Promise<T>): Promise<T> {
    const runner = this.createQueryRunner();
    const waitMs = this.hooks.lockWaitMs ?? MIGRATION_LOCK_WAIT_MS;
    try {
      await takeLock(runner, waitMs);
      // The pool's statement_timeout (data-source.ts) is for requests, not migrations: an index build or a
      // table rewrite may rightly take longer.
      await runner.query('SET statement_timeout = 0; SET lock_timeout = 0');
      return await fn(runner);
    } finally {
      // Back to the pool without the lock and with the pool's own settings (RESET → the connection's defaults).
      // A broken connection has already been dropped from the pool, and its session lock went with it.
      const cleanup = await runner
        .query(
          `SELECT pg_advisory_unlock(${MIGRATION_LOCK.classid}, ${MIGRATION_LOCK.objid});
           RESET statement_timeout; RESET lock_timeout`,
        )
        .then(
          () => null,
          (error: unknown) => (error instanceof Error ? error : new Error(String(error))),
        );
      await (cleanup ? discardConnection(runner, cleanup) : runner.release());
    }
  }
}

/**
 * Releases the runner's connection with an error, so pg-pool closes it instead of reusing it: a session whose
 * unlock failed must not go back to the pool still holding the lock. TypeORM's release() takes no error; the
 * method that does is internal, hence the cast (checked, with release() as the fallback).
 */
async function discardConnection(runner: QueryRunner, error: Error): Promise<void> {
  const internal = runner as unknown as { releasePostgresConnection?: (err: Error) => Promise<void> };
  if (typeof internal.releasePostgresConnection === 'function')
    await internal.releasePostgresConnection(error);
  else await runner.release();
}

/**
 * Takes MIGRATION_LOCK, polling with pg_try_advisory_lock rather than waiting in pg_advisory_lock: a waiting
 * statement holds a snapshot, and CREATE INDEX CONCURRENTLY in the holder's migration waits for every older
 * snapshot in the database — holder and waiter would deadlock (measured: "deadlock detected" with three
 * runners). Between polls the waiter holds nothing. Bounded by `waitMs`.
 */
async function takeLock(runner: QueryRunner, waitMs: number): Promise<void> {
  const deadline = Date.now() + waitMs;
  for (;;) {
    const [row] = (await runner.query('SELECT pg_try_advisory_lock($1, $2) AS locked', [
      MIGRATION_LOCK.classid,
      MIGRATION_LOCK.objid,
    ])) as { locked: boolean }[];
    if (row?.locked) return;
    const left = deadline - Date.now();
    if (left <= 0) throw new MigrationLockTimeoutError(waitMs, await lockHolder(runner));
    await new Promise((resolve) => setTimeout(resolve, Math.min(LOCK_POLL_MS, left)));
  }
}

/** Who holds the migration lock (for the timeout's message): pid, application name and since when. */
async function lockHolder(runner: QueryRunner): Promise<string> {
  const rows = (await runner
    .query(
      `SELECT a.pid, a.application_name, a.backend_start
         FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
        WHERE l.locktype = 'advisory' AND l.granted AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 2`,
      [MIGRATION_LOCK.classid, MIGRATION_LOCK.objid],
    )
    .catch(() => [])) as { pid: number; application_name: string; backend_start: Date }[];
  const holder = rows[0];
  return holder
    ? `pid ${holder.pid}, ${holder.application_name || 'no application name'}, connected ${new Date(holder.backend_start).toISOString()}`
    : 'a session that has since let go';
}
