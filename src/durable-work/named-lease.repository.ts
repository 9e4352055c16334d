import type { Logger } from '@nestjs/common';
import { escapeLiteral, type QueryResult, type QueryResultRow } from 'pg';
import type { DurableWorkMetrics } from './durable-work.metrics';

/** A pg pool or one checked-out connection: what plain-SQL repositories run their statements on. */
export interface Sql {
  query<R extends QueryResultRow = QueryResultRow>(text: string, values?: unknown[]): Promise<QueryResult<R>>;
}

export type AcquireResult =
  | { acquired: true; fencingToken: string; previous: { holder: string; passId: string | null } | null }
  | { acquired: false; holder: string; passId: string | null; expiresAt: Date };

/** Where a bound repository counts its claims, takeovers, refusals and releases (DurableWorkService.namedLeases). */
export interface NamedLeaseCounting {
  metrics: DurableWorkMetrics;
  /** The `queue` label (`sync` for catalog sync). */
  queue: string;
  logger: Logger;
}

/**
 * The only code that reads or writes `job_leases`: single-flight named leases (one holder of `sync:listings`
 * across replicas). A lease is held while `expires_at` is in the future (database clock, so replicas with skewed
 * clocks agree); every acquisition increments the fencing token. Counted in DurableWorkMetrics when built by
 * DurableWorkService.namedLeases (a bench or a repository test builds it bare).
 */
export class NamedLeaseRepository {
  constructor(
    private readonly sql: Sql,
    private readonly counting?: NamedLeaseCounting,
  ) {}

  /**
   * Takes the lease when it is free or expired, in ONE statement (a one-page walk's round trips,
   * docs/catalog-sync.md), inside the caller's transaction: the row stays locked until it commits, so the pass
   * row the caller creates and attaches is committed with it. A live lease costs a second statement, to name its
   * holder and pass.
   */
  async acquire(db: Sql, name: string, holder: string, ttlMs: number): Promise<AcquireResult> {
    const { rows } = await db.query<{
      token: string;
      previous_holder: string | null;
      previous_pass: string | null;
      released: boolean | null;
    }>(
      `INSERT INTO job_leases AS l (name, holder, fencing_token, acquired_at, renewed_at, expires_at)
       VALUES ($1, $2, 1, clock_timestamp(), clock_timestamp(), clock_timestamp() + make_interval(secs => $3 / 1000.0))
       ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, fencing_token = l.fencing_token + 1,
         acquired_at = clock_timestamp(), renewed_at = clock_timestamp(), expires_at = excluded.expires_at,
         pass_id = NULL
       WHERE l.expires_at <= clock_timestamp()
       RETURNING new.fencing_token::text AS token, old.holder AS previous_holder, old.pass_id::text AS previous_pass,
         old.expires_at = '-infinity' AS released`,
      [name, holder, ttlMs],
    );
    const taken = rows[0];
    if (taken) {
      const previous =
        taken.previous_holder === null || taken.previous_holder === ''
          ? null
          : { holder: taken.previous_holder, passId: taken.previous_pass };
      this.claimed(name, taken.token, holder, taken.released === false ? previous?.holder : null);
      return { acquired: true, fencingToken: taken.token, previous };
    }
    const { rows: live } = await db.query<{ holder: string; pass_id: string | null; expires_at: Date }>(
      `SELECT holder, pass_id::text, expires_at FROM job_leases WHERE name = $1`,
      [name],
    );
    const current = live[0];
    if (!current) throw new Error(`lease row ${name} vanished`);
    return {
      acquired: false,
      holder: current.holder,
      passId: current.pass_id,
      expiresAt: current.expires_at,
    };
  }

  async attachPass(db: Sql, name: string, fencingToken: string, passId: string): Promise<void> {
    await db.query(`UPDATE job_leases SET pass_id = $3 WHERE name = $1 AND fencing_token = $2`, [
      name,
      fencingToken,
      passId,
    ]);
  }

  /**
   * attachPass and the COMMIT of the caller's transaction in ONE round trip (a simple-protocol pair: no
   * parameters, so the values are checked decimal and the name quoted as a literal).
   */
  async attachPassAndCommit(db: Sql, name: string, fencingToken: string, passId: string): Promise<void> {
    if (!/^\d+$/.test(fencingToken) || !/^\d+$/.test(passId))
      throw new Error('lease token and pass id are decimal');
    await db.query(
      `UPDATE job_leases SET pass_id = ${passId} WHERE name = ${escapeLiteral(name)} AND fencing_token = ${fencingToken};
       COMMIT`,
    );
  }

  /**
   * The fencing check of a writer's LAST transaction and the release in one statement: frees the lease when
   * it is still held with this token and unexpired (the row stays locked until the caller commits, so a
   * takeover waits for the write); false when it was lost (the caller must roll back).
   */
  async releaseHeld(db: Sql, name: string, fencingToken: string): Promise<boolean> {
    const result = await db.query(
      `UPDATE job_leases SET expires_at = '-infinity', pass_id = NULL
       WHERE name = $1 AND fencing_token = $2 AND expires_at > clock_timestamp()`,
      [name, fencingToken],
    );
    if (result.rowCount !== 1) {
      this.fencedOff(name, fencingToken, 'write');
      return false;
    }
    this.counting?.metrics.released.inc({ queue: this.counting.queue });
    return true;
  }

  /** Extends a lease still held with this token; false when it was taken over (the holder must stop). */
  async renew(name: string, fencingToken: string, ttlMs: number): Promise<boolean> {
    const result = await this.sql.query(
      `UPDATE job_leases SET renewed_at = clock_timestamp(),
         expires_at = clock_timestamp() + make_interval(secs => $3 / 1000.0)
       WHERE name = $1 AND fencing_token = $2`,
      [name, fencingToken, ttlMs],
    );
    if (result.rowCount !== 1) this.fencedOff(name, fencingToken, 'renewal');
    return result.rowCount === 1;
  }

  /**
   * The fencing check of a write: inside the writer's transaction, locks the lease row in share mode (a
   * takeover waits for the write to commit) and returns whether the token is still current and unexpired.
   */
  async holds(db: Sql, name: string, fencingToken: string): Promise<boolean> {
    const { rows } = await db.query(
      `SELECT 1 FROM job_leases WHERE name = $1 AND fencing_token = $2 AND expires_at > clock_timestamp()
       FOR SHARE`,
      [name, fencingToken],
    );
    if (rows.length !== 1) this.fencedOff(name, fencingToken, 'write');
    return rows.length === 1;
  }

  /** Frees the lease at once (only when still held with this token). */
  async release(name: string, fencingToken: string, db: Sql = this.sql): Promise<void> {
    const result = await db.query(
      `UPDATE job_leases SET expires_at = '-infinity', pass_id = NULL WHERE name = $1 AND fencing_token = $2`,
      [name, fencingToken],
    );
    if (result.rowCount === 1) this.counting?.metrics.released.inc({ queue: this.counting.queue });
  }

  private claimed(name: string, token: string, owner: string, expiredOwner: string | null | undefined): void {
    if (!this.counting) return;
    const { metrics, queue, logger } = this.counting;
    metrics.claimed.inc({ queue });
    if (!expiredOwner) return;
    metrics.expired.inc({ queue });
    logger.warn(
      { queue, name, token, owner, previousOwner: expiredOwner },
      'durable work lease expired, taken over',
    );
  }

  /** A stale holder's write or renewal refused: counted and logged like DurableWorkService.fencedOff. */
  private fencedOff(name: string, token: string, what: string): void {
    if (!this.counting) return;
    const { metrics, queue, logger } = this.counting;
    metrics.fenced.inc({ queue });
    logger.warn({ queue, name, token, what }, 'durable work fenced off (lease lost)');
  }
}

/**
 * SQL predicate: a named lease currently covers the run `passId` (SQL expression) under `token`: attached to it,
 * same fencing token, not expired (database clock). How the owner of a run finds the runs nobody holds any more.
 */
export function namedLeaseCovers(passId: string, token: string): string {
  return `EXISTS (SELECT 1 FROM job_leases l
    WHERE l.pass_id = ${passId} AND l.fencing_token = ${token} AND l.expires_at > clock_timestamp())`;
}
