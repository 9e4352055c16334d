import type { ListingRow } from './catalog-sync.mapper';
import { nullableBigintArray, numericArray, textArray, type Sql } from './sql';

/**
 * The only code that writes `listings` (the read API reads it through CatalogMirrorService). Writes run on
 * a pass's own connection: the keys a pass has seen go to a session-local TEMP table, never to the
 * listings rows, so a pass over an unchanged catalog writes nothing to `listings`.
 */
export class ListingRepository {
  /** Creates (or empties) the pass's seen-keys table on its connection. */
  async prepareSeen(db: Sql): Promise<void> {
    await db.query(
      `CREATE TEMP TABLE IF NOT EXISTS sync_seen_listings (event_id numeric NOT NULL, ticket_id numeric NOT NULL)`,
    );
    await db.query(`TRUNCATE sync_seen_listings`);
  }

  async dropSeen(db: Sql): Promise<void> {
    await db.query(`DROP TABLE IF EXISTS pg_temp.sync_seen_listings`);
  }

  /**
   * One page, one statement: records the keys as seen, then inserts new rows and rewrites only rows whose
   * content differs or that were removed, and only where the stored state is not newer than this page
   * (`observed_at`, the stale-write guard). Returns the rows written.
   */
  async upsertPage(db: Sql, rows: readonly ListingRow[], observedAt: Date, passId: string): Promise<number> {
    if (rows.length === 0) return 0;
    const { rows: result } = await db.query<{ written: number }>(
      `WITH page AS (
         SELECT * FROM unnest($1::numeric[], $2::numeric[], $3::numeric[], $4::bigint[], $5::text[])
           AS p(event_id, ticket_id, ask_price_minor, expires_at, raw)
       ), seen AS (
         INSERT INTO sync_seen_listings (event_id, ticket_id) SELECT event_id, ticket_id FROM page
       ), changed AS (
         SELECT p.event_id, p.ticket_id, p.ask_price_minor, p.expires_at, p.raw::jsonb AS raw
         FROM page p LEFT JOIN listings l ON l.event_id = p.event_id AND l.ticket_id = p.ticket_id
         WHERE l.event_id IS NULL
            OR (l.observed_at <= $6 AND (l.removed_at IS NOT NULL OR l.raw <> p.raw::jsonb))
       ), written AS (
         INSERT INTO listings AS l (event_id, ticket_id, ask_price_minor, expires_at, raw, first_seen_at,
           last_seen_at, removed_at, observed_at, last_seen_pass)
         SELECT event_id, ticket_id, ask_price_minor, expires_at, raw, now(), now(), NULL, $6, $7 FROM changed
         ON CONFLICT (event_id, ticket_id) DO UPDATE SET
           ask_price_minor = excluded.ask_price_minor, expires_at = excluded.expires_at, raw = excluded.raw,
           first_seen_at = CASE WHEN l.removed_at IS NULL THEN l.first_seen_at ELSE excluded.first_seen_at END,
           last_seen_at = excluded.last_seen_at, removed_at = NULL, observed_at = excluded.observed_at,
           last_seen_pass = excluded.last_seen_pass
         WHERE l.observed_at <= excluded.observed_at
         RETURNING 1
       )
       SELECT count(*)::int AS written FROM written`,
      [
        numericArray(rows.map((r) => r.eventId)),
        numericArray(rows.map((r) => r.ticketId)),
        numericArray(rows.map((r) => r.askPriceMinor)),
        nullableBigintArray(rows.map((r) => r.expiresAt)),
        textArray(rows.map((r) => r.raw)),
        observedAt,
        passId,
      ],
    );
    return result[0]?.written ?? 0;
  }

  /**
   * The sweep of a COMPLETED pass: active rows of its scope (all listings, or one event's) that it did not
   * see and that nothing observed since the pass started are marked removed. Returns how many.
   */
  async sweep(db: Sql, passStartedAt: Date, passId: string, scopeEventId: bigint | null): Promise<number> {
    await db.query(`ANALYZE sync_seen_listings`);
    const result = await db.query(
      `UPDATE listings l SET removed_at = now(), observed_at = $1, last_seen_pass = $2
       WHERE l.removed_at IS NULL AND l.observed_at < $1 AND ($3::numeric IS NULL OR l.event_id = $3)
         AND NOT EXISTS (
           SELECT 1 FROM sync_seen_listings s WHERE s.event_id = l.event_id AND s.ticket_id = l.ticket_id)`,
      [passStartedAt, passId, scopeEventId?.toString() ?? null],
    );
    return result.rowCount ?? 0;
  }

  /**
   * Reconciliation (sync:verify): records the page's keys as seen and returns the keys the mirror lacks
   * (no active row) and those whose active row differs from the upstream item. Writes only the TEMP table.
   */
  async comparePage(
    db: Sql,
    rows: readonly ListingRow[],
  ): Promise<{ missing: string[]; differing: string[] }> {
    if (rows.length === 0) return { missing: [], differing: [] };
    const { rows: result } = await db.query<{ key: string; missing: boolean }>(
      `WITH page AS (
         SELECT * FROM unnest($1::numeric[], $2::numeric[], $3::numeric[], $4::text[])
           AS p(event_id, ticket_id, ask_price_minor, raw)
       ), seen AS (
         INSERT INTO sync_seen_listings (event_id, ticket_id) SELECT event_id, ticket_id FROM page
       )
       SELECT p.event_id::text || ':' || p.ticket_id::text AS key, l.event_id IS NULL AS missing
       FROM page p LEFT JOIN listings l
         ON l.event_id = p.event_id AND l.ticket_id = p.ticket_id AND l.removed_at IS NULL
       WHERE l.event_id IS NULL OR l.ask_price_minor <> p.ask_price_minor OR l.raw <> p.raw::jsonb`,
      [
        numericArray(rows.map((r) => r.eventId)),
        numericArray(rows.map((r) => r.ticketId)),
        numericArray(rows.map((r) => r.askPriceMinor)),
        textArray(rows.map((r) => r.raw)),
      ],
    );
    return {
      missing: result.filter((r) => r.missing).map((r) => r.key),
      differing: result.filter((r) => !r.missing).map((r) => r.key),
    };
  }

  /** Active mirror rows the reconciliation walk did not see (up to `limit` keys) and their count. */
  async unseenActive(db: Sql, limit: number): Promise<{ count: number; keys: string[] }> {
    const { rows } = await db.query<{ key: string; total: string }>(
      `SELECT l.event_id::text || ':' || l.ticket_id::text AS key, count(*) OVER ()::text AS total
       FROM listings l WHERE l.removed_at IS NULL AND NOT EXISTS (
         SELECT 1 FROM sync_seen_listings s WHERE s.event_id = l.event_id AND s.ticket_id = l.ticket_id)
       ORDER BY l.event_id, l.ticket_id LIMIT $1`,
      [limit],
    );
    return { count: Number(rows[0]?.total ?? 0), keys: rows.map((r) => r.key) };
  }
}
