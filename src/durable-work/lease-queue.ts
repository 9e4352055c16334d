import type { Logger } from '@nestjs/common';
import type { QueryResult } from 'pg';
import type { DataSource } from 'typeorm';
import { pgPool } from '../database/data-source';
import { inlineParams } from '../database/inline-params';
import type { DurableWorkMetrics } from './durable-work.metrics';
import {
  claimDueSql,
  claimFairSql,
  claimLockSql,
  claimOneSql,
  fairRoomSql,
  oldestDueAgeSql,
  type FairShare,
  type LeasedTable,
} from './lease.sql';

/** A row as PostgreSQL returned it (the owning repository maps it). */
export type LeasedRow = Record<string, unknown>;

/** What a queue is: its table, and which of its rows are due work beyond `next_attempt_at` (SQL predicates). */
export interface QueueSpec {
  /** Metrics and log label. */
  name: string;
  table: LeasedTable;
  /** Extra predicate of a due row; may use parameters $4… given to claimDue. */
  dueFilter?: string;
  /** Extra predicate of a row a wake-up may claim; may use parameters $4… given to claimOne. */
  wakeFilter?: string;
  /** Extra SET fragments of a claim of due rows (the row as `t`), e.g. counting the try it starts. */
  claimSet?: string;
  /**
   * Claims shared fairly between groups (an order's client, a delivery's endpoint and its client), each capped in
   * what it holds leased at once; a wake-up claims only within the same caps (lease.sql.ts claimFairSql).
   */
  fair?: FairShare;
  /**
   * A SELECT over the claimed rows (as `claimed`: the table's columns and `lease_expired_owner`, which it must
   * return with `id` and `lease_token`) that claims return instead of the rows: what the work needs from other
   * tables, read in the claim's own statement rather than one more query per row. Its joins must keep every
   * claimed row it returns; a row it leaves out stays claimed until its lease runs out.
   */
  claimSelect?: string;
  /**
   * False: wake-ups are not held to the fair share (an order woken by its own final transaction continues a drive
   * the client already had; the cap's count would cost the single-order path a query). Default true.
   */
  fairWake?: boolean;
  /**
   * Claims of this queue (passes and wake-ups, on every replica) run one at a time: each takes a transaction-level
   * advisory lock first and then claims in a second statement of the same transaction, whose snapshot sees every
   * claim committed before it. Without it, two claims running at once (two replicas' passes, or a pass and a ping)
   * each count the caps' room without the other's uncommitted leases and may overshoot a fair cap. For a queue
   * claimed often (the deliveries' refilling loop); one round trip still (both statements in one simple query).
   */
  serialClaims?: boolean;
}

/**
 * One leased table's claims, through the block's SQL (lease.sql.ts): claim due rows, claim one row, and count
 * hand-backs (a token check and a refusal go through DurableWorkService.holds / fencedOff). Each claim writes one log line per row (a takeover of an expired
 * lease is a warning naming the previous holder) and counts in DurableWorkMetrics. Built by DurableWorkService.
 */
export class LeaseQueue {
  constructor(
    readonly spec: QueueSpec,
    private readonly dataSource: DataSource,
    private readonly owner: string,
    private readonly metrics: DurableWorkMetrics,
    private readonly logger: Logger,
  ) {
    metrics.watchOldestDue(spec.name, () => this.oldestDueAge());
  }

  /** Claims up to `limit` due rows for `leaseMs` (SKIP LOCKED, a new token each). */
  async claimDue(limit: number, leaseMs: number, params: unknown[] = []): Promise<LeasedRow[]> {
    if (limit <= 0) return [];
    const { table, dueFilter, claimSet, fair, claimSelect } = this.spec;
    const sql = fair
      ? claimFairSql(table, fair, dueFilter, claimSet, claimSelect)
      : claimDueSql(table, dueFilter, claimSet, claimSelect);
    const rows = await this.query(sql, [this.owner, leaseMs, limit, ...params]);
    this.claimed(rows);
    return rows;
  }

  /**
   * Claims row `id` now if free or expired (and `wakeFilter` holds; under a fair share, only while its group and
   * owner have room); `set` adds SET fragments of the claim.
   */
  async claimOne(id: string, leaseMs: number, params: unknown[] = [], set = ''): Promise<LeasedRow | null> {
    const { table, wakeFilter = 'true', dueFilter, fair, fairWake = true, claimSelect } = this.spec;
    const filter =
      fair && fairWake ? `(${wakeFilter}) AND ${fairRoomSql(table, fair, dueFilter)}` : wakeFilter;
    const rows = await this.query(claimOneSql(table, filter, set, claimSelect), [
      this.owner,
      leaseMs,
      id,
      ...params,
    ]);
    this.claimed(rows);
    return rows[0] ?? null;
  }

  /** Counts a hand-back (the owning repository's statement dropped the lease). */
  released(): void {
    this.metrics.released.inc({ queue: this.spec.name });
  }

  /** Seconds since the oldest due row nobody holds became due (0 when none). */
  async oldestDueAge(): Promise<number> {
    const [row] = await this.dataSource.query<{ age: number }[]>(
      oldestDueAgeSql(this.spec.table, this.spec.dueFilter?.includes('$') ? 'true' : this.spec.dueFilter),
    );
    return row?.age ?? 0;
  }

  private async query(sql: string, params: unknown[]): Promise<LeasedRow[]> {
    if (this.spec.serialClaims) return this.serialQuery(sql, params);
    const result = await this.dataSource.query<LeasedRow[] | [LeasedRow[], number]>(sql, params);
    // UPDATE … RETURNING comes back as [rows, count] from the pg driver through TypeORM.
    return Array.isArray(result[0]) ? result[0] : (result as LeasedRow[]);
  }

  /** The lock and the claim in one implicit transaction (simple protocol: no parameters, so they are literals). */
  private async serialQuery(sql: string, params: unknown[]): Promise<LeasedRow[]> {
    const text = `${claimLockSql(this.spec.name)};\n${inlineParams(sql, params)}`;
    const results = (await pgPool(this.dataSource).query(text)) as unknown as QueryResult<LeasedRow>[];
    return results[1]?.rows ?? [];
  }

  private claimed(rows: LeasedRow[]): void {
    const queue = this.spec.name;
    for (const row of rows) {
      this.metrics.claimed.inc({ queue });
      const previous = row.lease_expired_owner as string | null;
      const line = { queue, id: row.id as string, token: String(row.lease_token), owner: this.owner };
      if (previous) {
        this.metrics.expired.inc({ queue });
        this.logger.warn({ ...line, previousOwner: previous }, 'durable work lease expired, taken over');
      } else this.logger.log(line, 'durable work claimed');
    }
  }
}
