import { Inject, Injectable } from '@nestjs/common';
import { PG_POOL } from '../database/database.module';
import type { Sql } from './sql';

/**
 * The only code that writes `event_freshness` (per-event `data_as_of`, docs/catalog-sync.md "Live catalog").
 * The read path's state query reads it (catalog-mirror.repository.ts), and the hot set joins it
 * (event-demand.repository.ts).
 */
@Injectable()
export class EventFreshnessRepository {
  /** The app's pg pool in the module (PG_POOL); tests and benches may pass a pool or a held client. */
  constructor(@Inject(PG_POOL) private readonly sql: Sql) {}

  /**
   * In the completing transaction of a complete walk of one event: that event's data is as of the walk's start.
   * Never moves back (an older walk completing after a newer one leaves the newer one's instant).
   */
  async record(db: Sql, eventId: bigint, dataAsOf: Date, passId: string, pages: number): Promise<void> {
    await db.query(
      `INSERT INTO event_freshness AS f (event_id, data_as_of, pass_id, pages) VALUES ($1, $2, $3, $4)
       ON CONFLICT (event_id) DO UPDATE SET data_as_of = excluded.data_as_of, pass_id = excluded.pass_id,
         pages = excluded.pages, walked_at = clock_timestamp()
       WHERE f.data_as_of < excluded.data_as_of`,
      [eventId.toString(), dataAsOf, passId, pages],
    );
  }

  /** Drops the rows older than `olderThanMs` (database clock): full passes have long covered those events. */
  async prune(olderThanMs: number): Promise<number> {
    const result = await this.sql.query(
      `DELETE FROM event_freshness WHERE data_as_of < now() - make_interval(secs => $1::float8 / 1000)`,
      [olderThanMs],
    );
    return result.rowCount ?? 0;
  }
}
