import { Inject, Injectable } from '@nestjs/common';
import { PG_POOL } from '../database/database.module';
import { numericArray, type Sql } from './sql';

/** One event of the hot set as the database sees it now. */
export interface HotEventRow {
  eventId: string;
  /** Decayed demand now (reads count 1, orders more; an event starting soon has at least the threshold). */
  score: number;
  /** The event's own data_as_of: its newest complete walk or the last complete full pass, ms (null: never). */
  asOfMs: number | null;
  /** Upstream pages its last walk took (the estimate of the next walk's cost; 1 when never walked). */
  pages: number;
}

export interface HotSetQuery {
  halfLifeMs: number;
  /** Events whose decayed score is below this are not hot. */
  threshold: number;
  startsWithinMs: number;
  limit: number;
}

/**
 * The only code that reads or writes `event_demand`: per-replica counts added across replicas with an
 * exponential decay on the database clock, and the hot set (demanded or starting soon) with each event's
 * own freshness.
 */
@Injectable()
export class EventDemandRepository {
  /** The app's pg pool in the module (PG_POOL); tests and benches may pass a pool or a held client. */
  constructor(@Inject(PG_POOL) private readonly sql: Sql) {}

  /**
   * Adds this replica's counts since the last flush (one statement): the stored score decays from its
   * `updated_at` to now, then the new count is added.
   */
  async add(counts: ReadonlyMap<string, number>, halfLifeMs: number): Promise<void> {
    if (counts.size === 0) return;
    const ids = [...counts.keys()];
    await this.sql.query(
      `INSERT INTO event_demand AS d (event_id, score, updated_at)
       SELECT e, s, now() FROM unnest($1::numeric[], $2::float8[]) AS t(e, s)
       ON CONFLICT (event_id) DO UPDATE SET
         score = d.score * exp(ln(0.5) * greatest(0, extract(epoch FROM now() - d.updated_at)) * 1000 / $3)
           + excluded.score,
         updated_at = now()`,
      [numericArray(ids.map(BigInt)), `{${ids.map((id) => counts.get(id)).join(',')}}`, halfLifeMs],
    );
  }

  /** Deletes the rows whose demand has decayed past any use (older than `olderThanMs`). */
  async prune(olderThanMs: number): Promise<number> {
    const result = await this.sql.query(
      `DELETE FROM event_demand WHERE updated_at < now() - make_interval(secs => $1::float8 / 1000)`,
      [olderThanMs],
    );
    return result.rowCount ?? 0;
  }

  /**
   * The hot set now: events whose decayed demand reaches the threshold, and active events starting within
   * `startsWithinMs`, the most demanded first, each with its own data_as_of (the later of its newest complete
   * walk and the last complete full listings pass).
   */
  async hotSet(query: HotSetQuery): Promise<HotEventRow[]> {
    const { rows } = await this.sql.query<{
      event_id: string;
      score: number;
      as_of_ms: string | null;
      pages: number | null;
    }>(
      `WITH demand AS (
         SELECT event_id, score * exp(ln(0.5) * greatest(0, extract(epoch FROM now() - updated_at)) * 1000 / $1)
           AS score
         FROM event_demand
       ), soon AS (
         SELECT event_id, $2::float8 AS score FROM events
         WHERE $3::float8 > 0 AND removed_at IS NULL AND start_at >= now()
           AND start_at < now() + make_interval(secs => $3::float8 / 1000)
         ORDER BY start_at LIMIT $4
       ), hot AS (
         SELECT event_id, max(score) AS score FROM (
           SELECT event_id, score FROM demand WHERE score >= $2 UNION ALL SELECT event_id, score FROM soon
         ) x GROUP BY event_id ORDER BY max(score) DESC LIMIT $4
       ), full_pass AS (
         SELECT started_at FROM sync_passes WHERE resource = 'listings' AND status = 'completed'
         ORDER BY finished_at DESC, id DESC LIMIT 1
       )
       SELECT h.event_id::text AS event_id, h.score,
         (extract(epoch FROM greatest(f.data_as_of, (SELECT started_at FROM full_pass))) * 1000)::text AS as_of_ms,
         f.pages
       FROM hot h LEFT JOIN event_freshness f ON f.event_id = h.event_id
       ORDER BY h.score DESC`,
      [query.halfLifeMs, query.threshold, query.startsWithinMs, query.limit],
    );
    return rows.map((r) => ({
      eventId: r.event_id,
      score: r.score,
      asOfMs: r.as_of_ms === null ? null : Number(r.as_of_ms),
      pages: Math.max(1, r.pages ?? 1),
    }));
  }
}
