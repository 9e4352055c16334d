import type { ClientBase, Pool } from 'pg';

/** One table's size on disk: heap with its TOAST (pg_table_size), its indexes, and its live rows. */
export interface TableSize {
  table: string;
  heapBytes: number;
  indexBytes: number;
  rows: number;
}

/** The sizes of `tables` now (a missing table reads as zero). Exact row counts: for the benches' own tables. */
export async function tableSizes(db: Pool | ClientBase, tables: readonly string[]): Promise<TableSize[]> {
  const sizes: TableSize[] = [];
  for (const table of tables) {
    const { rows } = await db.query<{ heap: string; indexes: string; n: string }>(
      `SELECT pg_table_size(c.oid)::text AS heap, pg_indexes_size(c.oid)::text AS indexes,
              (SELECT count(*) FROM ${table})::text AS n
         FROM pg_class c WHERE c.oid = to_regclass($1)`,
      [table],
    );
    const row = rows[0];
    sizes.push({
      table,
      heapBytes: Number(row?.heap ?? 0),
      indexBytes: Number(row?.indexes ?? 0),
      rows: Number(row?.n ?? 0),
    });
  }
  return sizes;
}

/**
 * What `units` more of something (orders, listings) cost on disk: each table's growth between two readings,
 * per million units (MB of heap + TOAST, MB of indexes, rows), and the total. Growth is counted in whole 8 KB pages,
 * so a table that grew by few pages is approximate: the figure is for sizing, not for a target.
 */
export function perMillion(before: TableSize[], after: TableSize[], units: number): string {
  const scale = 1_000_000 / units;
  const mb = (bytes: number): string => ((bytes * scale) / 1_048_576).toFixed(0);
  let heap = 0;
  let indexes = 0;
  const parts: string[] = [];
  for (const end of after) {
    const start = before.find((s) => s.table === end.table);
    const dHeap = end.heapBytes - (start?.heapBytes ?? 0);
    const dIndexes = end.indexBytes - (start?.indexBytes ?? 0);
    const dRows = end.rows - (start?.rows ?? 0);
    if (dRows === 0 && dHeap === 0 && dIndexes === 0) continue;
    heap += dHeap;
    indexes += dIndexes;
    parts.push(
      `${end.table} ${mb(dHeap)} + ${mb(dIndexes)} MB (${((dRows * scale) / 1_000_000).toFixed(1)}M rows)`,
    );
  }
  return `${mb(heap + indexes)} MB per million (heap ${mb(heap)}, indexes ${mb(indexes)}): ${parts.join('; ')}`;
}
