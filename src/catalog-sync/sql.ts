import type { Sql } from '../durable-work/named-lease.repository';

/** A pg pool or one checked-out connection (defined with the named leases, which run on it too). */
export type { Sql };

/**
 * Local buffers for a pass's TEMP tables (its seen keys and staging rows). The default 8 MB is outgrown by
 * the seen keys of a large catalog (~45 MB for 1M listings), and past it every batch evicts dirty temp
 * pages to files and reads them back. PostgreSQL allocates local buffers only as they are used.
 */
export const PASS_TEMP_BUFFERS = '128MB';

/**
 * Sets temp_buffers for this session, which PostgreSQL allows only before the session first touches a
 * temporary table: a connection that already has its temp schema (an earlier pass set the same value,
 * or something else used temp tables) keeps what it has, without an error that would abort a transaction.
 */
export async function sizeTempBuffers(db: Sql): Promise<void> {
  await db.query(`SELECT CASE WHEN pg_my_temp_schema() = 0 THEN set_config('temp_buffers', $1, false) END`, [
    PASS_TEMP_BUFFERS,
  ]);
}

/**
 * PostgreSQL array literals built by hand and sent as ONE text parameter. pg's default array encoding
 * escapes element by element through generic code and sends numbers via JS numbers; these keep u64 exact
 * and cost one string join per column.
 */
export function numericArray(values: readonly bigint[]): string {
  return `{${values.join(',')}}`;
}

export function nullableBigintArray(values: readonly (bigint | null)[]): string {
  return `{${values.map((v) => (v === null ? 'NULL' : v.toString())).join(',')}}`;
}

const QUOTE_OR_BACKSLASH = /["\\]/g;

export function quoteArrayElement(value: string): string {
  return `"${value.replace(QUOTE_OR_BACKSLASH, '\\$&')}"`;
}

export function textArray(values: readonly (string | null)[]): string {
  return `{${values.map((v) => (v === null ? 'NULL' : quoteArrayElement(v))).join(',')}}`;
}
