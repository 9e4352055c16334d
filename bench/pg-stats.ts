import type { Client } from 'pg';

/**
 * With BENCH_PG_STATS=1 (bench/chaos/database.ts loads pg_stat_statements into the run's own cluster): the
 * statements that took the most database time during the run, with calls and mean time — where a bench's
 * database time went (docs/BENCHMARKS.md "Where the checkout's time goes"). Nothing without the variable.
 */
export async function printPgStats(db: Client, top = 25): Promise<void> {
  if (process.env.BENCH_PG_STATS !== '1') return;
  await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const { rows } = await db.query<{ calls: string; total: string; mean: string; query: string }>(
    `SELECT calls::text, round(total_exec_time::numeric, 1)::text AS total, round(mean_exec_time::numeric, 3)::text AS mean,
            regexp_replace(query, '\\s+', ' ', 'g') AS query
       FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
      ORDER BY total_exec_time DESC LIMIT $1`,
    [top],
  );
  console.log('  database time by statement (pg_stat_statements: total ms, calls, mean ms)');
  for (const r of rows)
    console.log(
      `    ${r.total.padStart(9)} ${r.calls.padStart(7)} ${r.mean.padStart(8)}  ${r.query.slice(0, 150)}`,
    );
}
