import type { EventRow, PageRows } from './catalog-sync.mapper';
import { numericArray, sizeTempBuffers, textArray, type Sql } from './sql';
import { SweepHold } from './sweep-hold';

/** Event rows waiting for one write (an events pass is small: kept as the mapped pages). */
export class EventBatch {
  readonly pages: PageRows<EventRow>[] = [];
  rows = 0;

  reset(): void {
    this.pages.length = 0;
    this.rows = 0;
  }

  /** Always accepts: each page is its own statement, so keys may repeat across pages. */
  add(rows: readonly EventRow[], observedAt: Date): boolean {
    this.pages.push({ rows, observedAt });
    this.rows += rows.length;
    return true;
  }
}

/** The only code that writes `events` (same seen-keys and guard scheme as ListingRepository). */
export class EventRepository {
  async prepareSeen(db: Sql): Promise<void> {
    await sizeTempBuffers(db);
    await db.query(`CREATE TEMP TABLE IF NOT EXISTS sync_seen_events (event_id numeric NOT NULL)`);
    await db.query(`TRUNCATE sync_seen_events`);
  }

  async dropSeen(db: Sql): Promise<void> {
    await db.query(`DROP TABLE IF EXISTS pg_temp.sync_seen_events`);
  }

  /** Several pages in the caller's transaction, one statement per page (an events pass is small). */
  async writeBatch(db: Sql, batch: EventBatch, passId: string): Promise<number> {
    let written = 0;
    for (const page of batch.pages) written += await this.upsertPage(db, page.rows, page.observedAt, passId);
    return written;
  }

  async upsertPage(db: Sql, rows: readonly EventRow[], observedAt: Date, passId: string): Promise<number> {
    if (rows.length === 0) return 0;
    const { rows: result } = await db.query<{ written: number }>(
      `WITH page AS (
         SELECT * FROM unnest($1::numeric[], $2::text[], $3::text[], $4::timestamptz[], $5::text[])
           AS p(event_id, name, start_at_raw, start_at, raw)
       ), seen AS (
         INSERT INTO sync_seen_events (event_id) SELECT event_id FROM page
       ), changed AS (
         SELECT p.event_id, p.name, p.start_at_raw, p.start_at, p.raw::jsonb AS raw
         FROM page p LEFT JOIN events e ON e.event_id = p.event_id
         WHERE e.event_id IS NULL
            OR (e.observed_at <= $6 AND (e.removed_at IS NOT NULL OR e.raw <> p.raw::jsonb
                OR e.name <> p.name OR e.start_at_raw <> p.start_at_raw))
       ), written AS (
         INSERT INTO events AS e (event_id, name, start_at_raw, start_at, raw, first_seen_at, last_seen_at,
           removed_at, observed_at, last_seen_pass)
         SELECT event_id, name, start_at_raw, start_at, raw, now(), now(), NULL, $6, $7 FROM changed
         ON CONFLICT (event_id) DO UPDATE SET
           name = excluded.name, start_at_raw = excluded.start_at_raw, start_at = excluded.start_at,
           raw = excluded.raw,
           first_seen_at = CASE WHEN e.removed_at IS NULL THEN e.first_seen_at ELSE excluded.first_seen_at END,
           last_seen_at = excluded.last_seen_at, removed_at = NULL, observed_at = excluded.observed_at,
           last_seen_pass = excluded.last_seen_pass
         WHERE e.observed_at <= excluded.observed_at
         RETURNING 1
       )
       SELECT count(*)::int AS written FROM written`,
      [
        numericArray(rows.map((r) => r.eventId)),
        textArray(rows.map((r) => r.name)),
        textArray(rows.map((r) => r.startAtRaw)),
        textArray(rows.map((r) => r.startAt?.toISOString() ?? null)),
        textArray(rows.map((r) => r.raw)),
        observedAt,
        passId,
      ],
    );
    return result[0]?.written ?? 0;
  }

  /** See ListingRepository.sweep; an event without id could be any row, so it holds the whole sweep. */
  async sweep(db: Sql, passStartedAt: Date, passId: string, hold = new SweepHold()): Promise<number> {
    if (hold.all) return 0;
    await db.query(`ANALYZE sync_seen_events`);
    const result = await db.query(
      `UPDATE events e SET removed_at = now(), observed_at = $1, last_seen_pass = $2
       WHERE e.removed_at IS NULL AND e.observed_at < $1
         AND NOT EXISTS (SELECT 1 FROM sync_seen_events s WHERE s.event_id = e.event_id)`,
      [passStartedAt, passId],
    );
    return result.rowCount ?? 0;
  }

  /** Reconciliation (sync:verify): see ListingRepository.comparePage. */
  async comparePage(db: Sql, rows: readonly EventRow[]): Promise<{ missing: string[]; differing: string[] }> {
    if (rows.length === 0) return { missing: [], differing: [] };
    const { rows: result } = await db.query<{ key: string; missing: boolean }>(
      `WITH page AS (
         SELECT * FROM unnest($1::numeric[], $2::text[], $3::text[], $4::text[])
           AS p(event_id, name, start_at_raw, raw)
       ), seen AS (
         INSERT INTO sync_seen_events (event_id) SELECT event_id FROM page
       )
       SELECT p.event_id::text AS key, e.event_id IS NULL AS missing
       FROM page p LEFT JOIN events e ON e.event_id = p.event_id AND e.removed_at IS NULL
       WHERE e.event_id IS NULL OR e.name <> p.name OR e.start_at_raw <> p.start_at_raw OR e.raw <> p.raw::jsonb`,
      [
        numericArray(rows.map((r) => r.eventId)),
        textArray(rows.map((r) => r.name)),
        textArray(rows.map((r) => r.startAtRaw)),
        textArray(rows.map((r) => r.raw)),
      ],
    );
    return {
      missing: result.filter((r) => r.missing).map((r) => r.key),
      differing: result.filter((r) => !r.missing).map((r) => r.key),
    };
  }

  async unseenActive(db: Sql, limit: number): Promise<{ count: number; keys: string[] }> {
    const { rows } = await db.query<{ key: string; total: string }>(
      `SELECT e.event_id::text AS key, count(*) OVER ()::text AS total
       FROM events e WHERE e.removed_at IS NULL AND NOT EXISTS (
         SELECT 1 FROM sync_seen_events s WHERE s.event_id = e.event_id)
       ORDER BY e.event_id LIMIT $1`,
      [limit],
    );
    return { count: Number(rows[0]?.total ?? 0), keys: rows.map((r) => r.key) };
  }
}
