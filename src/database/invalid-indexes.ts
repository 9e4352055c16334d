import type { QueryRunner } from 'typeorm';

export interface IndexRepair {
  index: string;
  action: 'rebuilt' | 'dropped';
}

/**
 * Invalid indexes of the migrated schema, except one being built right now (an operator's own CONCURRENTLY
 * build is invalid until it finishes; migration builds cannot be running, the caller holds the migration lock).
 */
const INVALID_SQL = `
  SELECT n.nspname AS schema, c.relname AS name
    FROM pg_index i
    JOIN pg_class c ON c.oid = i.indexrelid
    JOIN pg_namespace n ON n.oid = c.relnamespace
   WHERE NOT i.indisvalid
     AND n.nspname = current_schema()
     AND NOT EXISTS (SELECT 1 FROM pg_stat_progress_create_index p WHERE p.index_relid = i.indexrelid)
   ORDER BY c.relname`;

/** The transient copies REINDEX CONCURRENTLY makes; left invalid when it is interrupted. */
const REINDEX_LEFTOVER = /_cc(new|old)\d*$/;

/**
 * Repairs what an interrupted CONCURRENTLY build leaves behind: an index that exists but is INVALID (the
 * planner never uses it, yet every write still maintains it). That happens when a replica dies mid-build after
 * another runner recorded the migration (the race this lock now prevents, on databases migrated before it), or
 * when a REINDEX CONCURRENTLY is cut short. Landed migrations are never edited, so the runner repairs it:
 * `REINDEX INDEX CONCURRENTLY` rebuilds it under its own name (writes go on meanwhile); a `_ccnew`/`_ccold`
 * copy of an interrupted reindex is dropped, as the PostgreSQL manual recommends. Runs outside a transaction.
 */
export async function repairInvalidIndexes(runner: QueryRunner): Promise<IndexRepair[]> {
  const invalid = (await runner.query(INVALID_SQL)) as { schema: string; name: string }[];
  const repairs: IndexRepair[] = [];
  for (const { schema, name } of invalid) {
    const qualified = `${quoteIdent(schema)}.${quoteIdent(name)}`;
    if (REINDEX_LEFTOVER.test(name)) {
      await runner.query(`DROP INDEX CONCURRENTLY IF EXISTS ${qualified}`);
      repairs.push({ index: name, action: 'dropped' });
    } else {
      await runner.query(`REINDEX INDEX CONCURRENTLY ${qualified}`);
      repairs.push({ index: name, action: 'rebuilt' });
    }
  }
  return repairs;
}

function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}
