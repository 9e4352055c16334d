// One piece: the hand-written SQL that writes the mirror's `listings` during a pass (the direct COPY of a
// backfill, the COPY batch and staged merge, the sweep, the one-statement whole-event walk), sharing one column
// list and the pass's temp tables; a repository owning its table's writes reads best whole.
import type { PoolClient } from 'pg';
import { isUniqueViolation } from '../database/pg-errors';
import type { ListingRow } from './catalog-sync.mapper';
import { ListingBatch } from './listing-batch';
import { copyFrom } from './pg-copy';
import { MIRROR_GENERATION_CHANNEL } from './mirror-generation.repository';
import { nullableBigintArray, numericArray, PASS_TEMP_BUFFERS, textArray, type Sql } from './sql';
import { SweepHold } from './sweep-hold';

/** The listing columns a pass writes (the staged merge and the one-page walk insert the same row). */
const INSERT_LISTING = `INSERT INTO listings AS l (event_id, ticket_id, ask_price_minor, expires_at, raw, first_seen_at,
           last_seen_at, removed_at, observed_at, last_seen_pass)`;

/** A listing seen again: the newer observation wins (never an older page over a fresher live read). */
const NEWER_WINS = `ON CONFLICT (event_id, ticket_id) DO UPDATE SET
           ask_price_minor = excluded.ask_price_minor, expires_at = excluded.expires_at, raw = excluded.raw,
           first_seen_at = CASE WHEN l.removed_at IS NULL THEN l.first_seen_at ELSE excluded.first_seen_at END,
           last_seen_at = excluded.last_seen_at, removed_at = NULL, observed_at = excluded.observed_at,
           last_seen_pass = excluded.last_seen_pass
         WHERE l.observed_at <= excluded.observed_at`;

/** Up to this many staged rows (~1.2 KB each with their jsonb) sort within the default 4 MB work_mem. */
const SMALL_BATCH_ROWS = 2000;

/**
 * A backfill's direct write: ListingBatch.withTail's lines, whose tail is `now`, `now` (the timestamp input
 * `now` is the transaction's start, what the merge's now() writes) and the pass id; removed_at is left NULL.
 */
const COPY_NEW = `COPY listings (event_id, ticket_id, ask_price_minor, expires_at, raw, observed_at, first_seen_at,
  last_seen_at, last_seen_pass) FROM STDIN`;

/**
 * The only code that writes `listings` (the read API reads it through CatalogMirrorService). Writes run on
 * a pass's own connection: the keys a pass has seen go to a session-local TEMP table, never to the
 * listings rows, so a pass over an unchanged catalog writes nothing to `listings`. Rows reach PostgreSQL
 * through `COPY` into a session-local staging table (`raw` parsed to jsonb once, by COPY), then one merge;
 * a backfill into an empty mirror COPYs them into `listings` itself while no key is there yet (copyNew).
 */
export class ListingRepository {
  /**
   * Creates (or empties) the pass's seen-keys table and its staging table on its connection, in ONE round trip
   * (a simple-protocol multi-statement: a hot walk pays its fixed costs once per few hundred ms). temp_buffers
   * is sized as sizeTempBuffers does (only before the session's first temporary table). A connection that
   * kept the tables from an earlier per-event walk (the runner does not drop them after those) reuses them.
   */
  async prepareSeen(db: Sql): Promise<void> {
    await db.query(
      `SELECT CASE WHEN pg_my_temp_schema() = 0 THEN set_config('temp_buffers', '${PASS_TEMP_BUFFERS}', false) END;
       CREATE TEMP TABLE IF NOT EXISTS sync_seen_listings (event_id numeric NOT NULL, ticket_id numeric NOT NULL);
       CREATE TEMP TABLE IF NOT EXISTS sync_stage_listings (event_id numeric NOT NULL, ticket_id numeric NOT NULL,
         ask_price_minor numeric NOT NULL, expires_at bigint, raw jsonb NOT NULL, observed_at timestamptz NOT NULL);
       TRUNCATE sync_seen_listings, sync_stage_listings`,
    );
  }

  async dropSeen(db: Sql): Promise<void> {
    await db.query(`DROP TABLE IF EXISTS pg_temp.sync_seen_listings, pg_temp.sync_stage_listings`);
  }

  /** One page: see writeBatch. */
  async upsertPage(
    db: PoolClient,
    rows: readonly ListingRow[],
    observedAt: Date,
    passId: string,
  ): Promise<number> {
    const batch = new ListingBatch();
    batch.add(rows, observedAt);
    return this.writeBatch(db, batch, passId);
  }

  /**
   * Several pages, one COPY and one merge statement (run it inside the caller's transaction): records the
   * keys as seen, then inserts new rows and rewrites only rows whose content differs or that were removed,
   * and only where the stored state is not newer than the row's page (`observed_at`, the stale-write guard).
   * Returns the rows written.
   */
  async writeBatch(db: PoolClient, batch: ListingBatch, passId: string): Promise<number> {
    if (batch.rows === 0) return 0;
    await db.query(`TRUNCATE sync_stage_listings`);
    await copyFrom(db, 'COPY sync_stage_listings FROM STDIN', batch.data);
    // The content check is a scalar subquery (one primary-key probe per staged row) rather than a join, so
    // the planner cannot pick a hash join over the whole mirror for a staging table it has no statistics on.
    // Rows are inserted in primary-key order: consecutive inserts then share index pages (+20% rows/s in
    // an isolated 300k-row test). The batch's sort (~6 MB with its jsonb) needs more than the default 4 MB
    // work_mem to stay in memory; LOCAL, so the connection is back to the default at commit. A batch of a
    // couple of pages (a hot walk) sorts within the default: no round trip for it.
    if (batch.rows > SMALL_BATCH_ROWS) await db.query(`SELECT set_config('work_mem', '32MB', true)`);
    // Only the keys this statement did not write go to the seen table: a written row carries the pass's id
    // (last_seen_pass), which the sweep counts as seen, so a pass into an empty mirror inserts no seen keys.
    const { rows: result } = await db.query<{ written: number }>(
      `WITH written AS (
         ${INSERT_LISTING}
         SELECT s.event_id, s.ticket_id, s.ask_price_minor, s.expires_at, s.raw, now(), now(), NULL,
           s.observed_at, $1
         FROM sync_stage_listings s
         WHERE (SELECT m.observed_at > s.observed_at OR (m.removed_at IS NULL AND m.raw = s.raw)
                FROM listings m WHERE m.event_id = s.event_id AND m.ticket_id = s.ticket_id) IS NOT TRUE
         ORDER BY s.event_id, s.ticket_id
         ${NEWER_WINS}
         RETURNING l.event_id, l.ticket_id
       ), seen AS (
         INSERT INTO sync_seen_listings (event_id, ticket_id)
         SELECT s.event_id, s.ticket_id FROM sync_stage_listings s
         WHERE NOT EXISTS (SELECT 1 FROM written w WHERE w.event_id = s.event_id AND w.ticket_id = s.ticket_id)
       )
       SELECT count(*)::int AS written FROM written`,
      [passId],
    );
    return result[0]?.written ?? 0;
  }

  /**
   * A backfill's batch written with `COPY listings … FROM STDIN`, no staging table and no merge (run it inside
   * the caller's transaction), under a savepoint. Every row is inserted as the merge inserts a new row (same
   * columns and values; `last_seen_pass` = the pass, so the sweep counts it seen without a seen key), and the
   * INSERT triggers fire as they do for the merge. Returns the rows written, or null, having written nothing
   * (back to the savepoint), when one of the keys is already in `listings`: some other writer got there first
   * and the batch must go through writeBatch, whose stale-write guard and content check then decide.
   * Only worth it while the mirror is empty (docs/catalog-sync.md "Backfill: COPY straight into listings").
   */
  async copyNew(db: PoolClient, batch: ListingBatch, passId: string): Promise<number | null> {
    if (batch.rows === 0) return 0;
    if (!/^\d+$/.test(passId)) throw new Error(`pass id ${passId} is not a number`);
    await db.query('SAVEPOINT listings_copy_new');
    try {
      return await copyFrom(db, COPY_NEW, batch.withTail(`now\tnow\t${passId}`));
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      await db.query('ROLLBACK TO SAVEPOINT listings_copy_new');
      return null;
    }
  }

  /**
   * The sweep of a COMPLETED pass: active rows of its scope (all listings, or one event's) that it did not
   * see (not in its seen table, not written by it), that nothing observed since the pass started, and that no
   * item of the pass with a null identifier could be (`hold`) are marked removed. Returns how many.
   * A full pass leaves the events that a per-event walk started after it has completed or is running: that
   * walk is the newer observation of the event, and may have seen a row unchanged (an unchanged row is not
   * written, so its `observed_at` does not say so).
   */
  async sweep(
    db: Sql,
    passStartedAt: Date,
    passId: string,
    scopeEventId: bigint | null,
    hold: SweepHold = new SweepHold(),
  ): Promise<number> {
    if (hold.all) return 0;
    // Statistics matter for a full pass's million seen keys (anti-join plan); one event's walk (a few pages,
    // the sweep bounded by the event_id index) plans the same without them and skips the round trip.
    if (scopeEventId === null) await db.query(`ANALYZE sync_seen_listings`);
    const result = await db.query(
      `UPDATE listings l SET removed_at = now(), observed_at = $1, last_seen_pass = $2
       WHERE l.removed_at IS NULL AND l.observed_at < $1 AND ($3::numeric IS NULL OR l.event_id = $3)
         AND l.last_seen_pass IS DISTINCT FROM $2
         AND l.event_id <> ALL($4::numeric[]) AND l.ticket_id <> ALL($5::numeric[])
         AND ($3::numeric IS NOT NULL OR l.event_id NOT IN (
           SELECT f.event_id FROM event_freshness f WHERE f.data_as_of > $1
           UNION ALL SELECT p.scope_event_id FROM sync_passes p
           WHERE p.resource = 'event_listings' AND p.status = 'running' AND p.started_at > $1))
         AND NOT EXISTS (
           SELECT 1 FROM sync_seen_listings s WHERE s.event_id = l.event_id AND s.ticket_id = l.ticket_id)`,
      [passStartedAt, passId, scopeEventId?.toString() ?? null, [...hold.events], [...hold.tickets]],
    );
    return result.rowCount ?? 0;
  }

  /**
   * A per-event walk whose first page was its last, written and completed in ONE statement (run it in the
   * transaction that claimed the event's lease and created the pass; docs/catalog-sync.md "One-page walks"):
   * the page's rows merged as writeBatch merges them (same content check and stale-write guard, no staging
   * table: the rows travel as array parameters), the event's active rows not on the page swept as `sweep` does
   * (the page's keys are the seen set: no seen table), the event's data_as_of recorded, the pass completed with
   * its counters, and the mirror generation bumped and notified when a row changed. The merge and the sweep
   * touch disjoint rows (page keys / other keys), so one snapshot serves both.
   */
  async walkWholeEvent(
    db: Sql,
    walk: {
      eventId: bigint;
      rows: readonly ListingRow[];
      /** When the page's read started (its rows' observed_at). */
      observedAt: Date;
      /** The pass's start: the sweep's bound and stamp, and the event's data_as_of (as `sweep`). */
      passStartedAt: Date;
      passId: string;
      items: number;
      skipped: number;
      hold: SweepHold;
    },
  ): Promise<{ written: number; removed: number; finishedAt: Date | null }> {
    const { rows, eventId, hold } = walk;
    const { rows: result } = await db.query<{ written: number; removed: number; finished_at: Date | null }>(
      `WITH page AS MATERIALIZED (
         SELECT p.event_id, p.ticket_id, p.ask_price_minor, p.expires_at, p.raw::jsonb AS raw
         FROM unnest($1::numeric[], $2::numeric[], $3::numeric[], $4::bigint[], $5::text[])
           AS p(event_id, ticket_id, ask_price_minor, expires_at, raw)
       ), written AS (
         ${INSERT_LISTING}
         SELECT s.event_id, s.ticket_id, s.ask_price_minor, s.expires_at, s.raw, now(), now(), NULL, $6, $7
         FROM page s
         WHERE (SELECT m.observed_at > $6 OR (m.removed_at IS NULL AND m.raw = s.raw)
                FROM listings m WHERE m.event_id = s.event_id AND m.ticket_id = s.ticket_id) IS NOT TRUE
         ORDER BY s.event_id, s.ticket_id
         ${NEWER_WINS}
         RETURNING 1
       ), swept AS (
         UPDATE listings l SET removed_at = now(), observed_at = $15, last_seen_pass = $7
         WHERE $8::boolean AND l.event_id = $9::numeric AND l.removed_at IS NULL AND l.observed_at < $15
           AND l.ticket_id <> ALL($10::numeric[])
           AND l.event_id <> ALL($11::numeric[]) AND l.ticket_id <> ALL($12::numeric[])
         RETURNING 1
       ), counts AS (
         SELECT (SELECT count(*) FROM written)::int AS written, (SELECT count(*) FROM swept)::int AS removed
       ), fresh AS (
         INSERT INTO event_freshness AS f (event_id, data_as_of, pass_id, pages) VALUES ($9, $15, $7, 1)
         ON CONFLICT (event_id) DO UPDATE SET data_as_of = excluded.data_as_of, pass_id = excluded.pass_id,
           pages = excluded.pages, walked_at = clock_timestamp()
         WHERE f.data_as_of < excluded.data_as_of
       ), done AS (
         UPDATE sync_passes p SET status = 'completed', finished_at = clock_timestamp(), pages = p.pages + 1,
           items = p.items + $13, upserted = p.upserted + c.written, removed = p.removed + c.removed,
           skipped = p.skipped + $14
         FROM counts c WHERE p.id = $7 AND p.status = 'running'
         RETURNING p.finished_at
       ), bumped AS (
         UPDATE mirror_generation SET generation = generation + 1, changed_at = now()
         WHERE (SELECT written + removed FROM counts) > 0
         RETURNING generation
       )
       SELECT c.written, c.removed, (SELECT finished_at FROM done) AS finished_at,
         (SELECT pg_notify('${MIRROR_GENERATION_CHANNEL}', generation::text) FROM bumped) IS NULL AS notified
       FROM counts c`,
      [
        numericArray(rows.map((r) => r.eventId)),
        numericArray(rows.map((r) => r.ticketId)),
        numericArray(rows.map((r) => r.askPriceMinor)),
        nullableBigintArray(rows.map((r) => r.expiresAt)),
        textArray(rows.map((r) => r.raw)),
        walk.observedAt,
        walk.passId,
        !hold.all,
        eventId.toString(),
        numericArray(rows.filter((r) => r.eventId === eventId).map((r) => r.ticketId)),
        `{${[...hold.events].join(',')}}`,
        `{${[...hold.tickets].join(',')}}`,
        walk.items,
        walk.skipped,
        walk.passStartedAt,
      ],
    );
    const row = result[0];
    return { written: row?.written ?? 0, removed: row?.removed ?? 0, finishedAt: row?.finished_at ?? null };
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
