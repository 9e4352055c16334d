import type { Pool, QueryResult, QueryResultRow } from 'pg';
import type { DataSource } from 'typeorm';

/** A pg pool or one checked-out connection: what the catalog-sync repositories run their SQL on. */
export interface Sql {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

/**
 * The pg pool behind TypeORM's data source. Sync passes check out one connection for a whole pass (their
 * session-local staging table lives on it) and use plain pg results (row counts of UPDATE included).
 */
export function pgPool(dataSource: DataSource): Pool {
  return (dataSource.driver as unknown as { master: Pool }).master;
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
