import { spawn } from 'node:child_process';
import type { MigrationInterface, QueryRunner } from 'typeorm';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createDataSource } from '../../src/database/data-source';
import { MigrationLockTimeoutError } from '../../src/database/migration-lock';
import { MIGRATIONS } from '../../src/database/migrations';
import { createDatabaseFromTemplate, dropDatabase } from '../support/test-database';
import { withPg } from '../support/catalog-mirror';

/**
 * Migrations on N replicas (issue 23 item 4): every runner — each replica's boot, the CLI, the tests' template —
 * takes one PostgreSQL advisory lock for the whole run, so runners started together apply each migration once
 * and the CONCURRENTLY index migration (which starts with DROP INDEX CONCURRENTLY IF EXISTS) never drops the
 * index another runner has just built and recorded.
 */

/** The lock every migration run holds (src/database/migration-lock.ts): the two-key advisory form. */
const LOCK = { classid: 1835624306, objid: 1 };

interface Exit {
  code: number | null;
  out: string;
}

/** `npm run migration:<command>` without the build step, as a child process (bounded). */
function migrationCli(command: string, databaseUrl: string, timeoutMs = 60_000): Promise<Exit> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['dist/src/database/migration.cli.js', command], {
      env: { PATH: process.env.PATH ?? '', NODE_ENV: 'test', DATABASE_URL: databaseUrl },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, out });
    });
  });
}

async function migrationRows(url: string): Promise<string[]> {
  return withPg(url, async (c) => {
    const t = await c.query<{ t: string | null }>(`SELECT to_regclass('migrations') AS t`);
    if (!t.rows[0]?.t) return [];
    return (await c.query<{ name: string }>('SELECT name FROM migrations ORDER BY id')).rows.map(
      (r) => r.name,
    );
  });
}

/** Each index of the schema and whether PostgreSQL may use it (an interrupted CONCURRENTLY build is not). */
async function indexValidity(url: string): Promise<Map<string, boolean>> {
  return withPg(url, async (c) => {
    const { rows } = await c.query<{ name: string; valid: boolean }>(
      `SELECT ic.relname AS name, i.indisvalid AS valid
         FROM pg_index i JOIN pg_class ic ON ic.oid = i.indexrelid
         JOIN pg_namespace n ON n.oid = ic.relnamespace
        WHERE n.nspname = current_schema()`,
    );
    return new Map(rows.map((r) => [r.name, r.valid]));
  });
}

/** A run exited 0; on failure the assertion shows what it printed. */
function expectSucceeded(run: Exit): void {
  expect(run.code === 0 ? 'exit 0' : `exit ${run.code}: ${run.out}`).toBe('exit 0');
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

describe('migrations under an advisory lock (real PostgreSQL, separate processes)', () => {
  const adminUrl = inject('databaseAdminUrl');
  const created: string[] = [];
  const emptyDatabase = async (): Promise<string> => {
    const url = await createDatabaseFromTemplate(adminUrl, 'template0');
    created.push(url);
    return url;
  };
  afterAll(async () => {
    for (const url of created) await dropDatabase(adminUrl, url);
  });

  it('three runners started at once on an empty database: all succeed, each migration ran once, the CONCURRENTLY index is valid', async () => {
    const names = MIGRATIONS.map((m) => m.name);
    for (let round = 0; round < 2; round++) {
      const url = await emptyDatabase();
      const runs = await Promise.all([1, 2, 3].map(() => migrationCli('run', url)));
      for (const run of runs) expectSucceeded(run);
      // One runner applied everything; the others waited for the lock and then found nothing pending.
      const applied = runs
        .map((r) => Number(/applied (\d+) migration/.exec(r.out)?.[1]))
        .sort((a, b) => a - b);
      expect(applied).toEqual([0, 0, names.length]);
      expect(await migrationRows(url)).toEqual(names);
      expect((await indexValidity(url)).get('orders_buyer_open_idx')).toBe(true);
    }
  }, 120_000);

  it('a runner waits while another session holds the migration lock, then applies everything', async () => {
    const url = await emptyDatabase();
    await withPg(url, async (holder) => {
      await holder.query('SELECT pg_advisory_lock($1, $2)', [LOCK.classid, LOCK.objid]);
      const run = migrationCli('run', url);
      // Bounded: the runner is connected (it polls the lock; see migration-lock.ts) yet has migrated nothing.
      let waiting = false;
      for (let i = 0; i < 100 && !waiting; i++) {
        const { rows } = await holder.query<{ n: string }>(
          `SELECT count(*) AS n FROM pg_stat_activity
            WHERE datname = current_database() AND application_name = 'ticket-resale-bff-migrations'`,
        );
        waiting = rows[0]?.n === '1';
        if (!waiting) await sleep(100);
      }
      expect(waiting).toBe(true);
      await sleep(1500);
      expect(await migrationRows(url)).toEqual([]);
      await holder.query('SELECT pg_advisory_unlock($1, $2)', [LOCK.classid, LOCK.objid]);
      const done = await run;
      expectSucceeded(done);
    });
    expect(await migrationRows(url)).toEqual(MIGRATIONS.map((m) => m.name));
  }, 60_000);

  it('an INVALID index left by an interrupted CONCURRENTLY build is rebuilt by the next run; a leftover _ccnew copy is dropped', async () => {
    const url = await createDatabaseFromTemplate(adminUrl);
    created.push(url);
    const interruptedBuild = async (name: string): Promise<void> => {
      await withPg(url, async (blocker) => {
        // A writer's open transaction makes CREATE INDEX CONCURRENTLY wait; the build's statement_timeout
        // cancels it there, after the index was catalogued: it stays behind, INVALID (as after a crash).
        await blocker.query('BEGIN');
        await blocker.query('LOCK TABLE orders IN ROW EXCLUSIVE MODE');
        await withPg(url, async (builder) => {
          await builder.query(`SET statement_timeout = '300ms'`);
          await expect(
            builder.query(
              `CREATE INDEX CONCURRENTLY ${name} ON orders (client_id, buyer_subject)
                 WHERE state NOT IN ('confirmed', 'landed_with_error', 'rejected', 'failed')`,
            ),
          ).rejects.toMatchObject({ code: '57014' });
        });
        await blocker.query('ROLLBACK');
      });
    };
    await withPg(url, (c) => c.query('DROP INDEX orders_buyer_open_idx'));
    await interruptedBuild('orders_buyer_open_idx');
    await interruptedBuild('orders_buyer_open_idx_ccnew');
    const before = await indexValidity(url);
    expect(before.get('orders_buyer_open_idx')).toBe(false);
    expect(before.get('orders_buyer_open_idx_ccnew')).toBe(false);

    const run = await migrationCli('run', url);
    expectSucceeded(run);
    expect(run.out).toContain('applied 0 migration(s)');
    expect(run.out).toContain('rebuilt invalid index orders_buyer_open_idx');
    expect(run.out).toContain('dropped invalid index orders_buyer_open_idx_ccnew');
    const after = await indexValidity(url);
    expect(after.get('orders_buyer_open_idx')).toBe(true);
    expect(after.has('orders_buyer_open_idx_ccnew')).toBe(false);
    expect([...after.values()].every(Boolean)).toBe(true);
  }, 60_000);

  it('a migration runs with no statement_timeout, on the session holding the lock; the pool keeps its timeout', async () => {
    const url = await emptyDatabase();
    const seen: { timeout?: string; holdsLock?: boolean } = {};
    class Probe1700000000000 implements MigrationInterface {
      name = 'Probe1700000000000';
      async up(queryRunner: QueryRunner): Promise<void> {
        const [t] = (await queryRunner.query('SHOW statement_timeout')) as { statement_timeout: string }[];
        const [l] = (await queryRunner.query(
          `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND granted
              AND pid = pg_backend_pid() AND classid = $1 AND objid = $2 AND objsubid = 2`,
          [LOCK.classid, LOCK.objid],
        )) as { n: number }[];
        seen.timeout = t?.statement_timeout;
        seen.holdsLock = l?.n === 1;
      }
      async down(): Promise<void> {}
    }
    const sut = createDataSource({ url, poolSize: 1 });
    sut.setOptions({ migrations: [Probe1700000000000] });
    await sut.initialize();
    try {
      await sut.runMigrations({ transaction: 'each' });
      expect(seen).toEqual({ timeout: '0', holdsLock: true });
      // The one pooled connection went back with the service's 30 s limit and without the lock.
      const [after] = await sut.query<{ statement_timeout: string }[]>('SHOW statement_timeout');
      expect(after?.statement_timeout).toBe('30s');
      const [locks] = await sut.query<{ n: number }[]>(
        `SELECT count(*)::int AS n FROM pg_locks WHERE locktype = 'advisory' AND classid = $1`,
        [LOCK.classid],
      );
      expect(locks?.n).toBe(0);
    } finally {
      await sut.destroy();
    }
  });

  it('a runner gives up after its bounded wait, naming the session that holds the lock', async () => {
    const url = await emptyDatabase();
    await withPg(url, async (holder) => {
      await holder.query(`SET application_name = 'stuck-migrator'`);
      await holder.query('SELECT pg_advisory_lock($1, $2)', [LOCK.classid, LOCK.objid]);
      const { rows } = await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
      const pid = rows[0]?.pid;
      const sut = createDataSource({ url, poolSize: 1 }, { lockWaitMs: 600 });
      await sut.initialize();
      try {
        const t0 = Date.now();
        const error: unknown = await sut.runMigrations().catch((e: unknown) => e);
        expect(error).toBeInstanceOf(MigrationLockTimeoutError);
        expect((error as Error).message).toContain(`pid ${pid}, stuck-migrator`);
        expect(Date.now() - t0).toBeLessThan(5_000);
      } finally {
        await sut.destroy();
      }
    });
    expect(await migrationRows(url)).toEqual([]);
  });
});
