import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

export interface OpenOrder {
  id: string;
  state: string;
  createdAt: number;
  attempt: number;
}

/** How many orders of a minute became final in `state` at attempt `attempt`. */
export interface FinalCount {
  state: string;
  attempt: number;
  count: number;
}

/** Bound of the times to final read for one minute (the percentiles of a busier minute are of its first 20,000). */
const MAX_FINALS_PER_MINUTE = 20_000;
/** Bound of a minute's (outcome, attempt) counts: ten states times the attempt numbers a retry budget allows. */
const MAX_FINAL_COUNTS = 1_000;

const ms = (column: string): string => `(extract(epoch FROM ${column}) * 1000)::float8`;

/**
 * Read-only figures of `orders` that the status page asks for through CheckoutService (docs/status.md "Where the
 * figures come from"): each statement reads an index range (the due and final indexes) and returns a bounded
 * number of rows; none writes, locks or claims. Times are epoch ms of the database clock.
 */
@Injectable()
export class OrderFiguresRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Orders still in the service's hands (not done) by state, through the partial due index. */
  async openByState(): Promise<Record<string, number>> {
    const rows = await this.dataSource.query<{ state: string; n: number }[]>(
      `SELECT state, count(*)::int AS n FROM orders WHERE recovery_point <> 'done' GROUP BY state`,
    );
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  /** The oldest order not final yet. */
  async oldestOpen(): Promise<OpenOrder | null> {
    const [row] = await this.dataSource.query<
      { id: string; state: string; created_at: number; attempt: number }[]
    >(
      `SELECT id::text, state, ${ms('created_at')} AS created_at, attempt FROM orders
       WHERE recovery_point <> 'done' AND final_at IS NULL ORDER BY created_at, id LIMIT 1`,
    );
    return row ? { id: row.id, state: row.state, createdAt: row.created_at, attempt: row.attempt } : null;
  }

  /**
   * Orders that became final in [from, to) (epoch ms) counted by outcome and attempt number: every one of them
   * (the final index's range), unlike the percentiles' sample.
   */
  async finalCounts(from: number, to: number): Promise<FinalCount[]> {
    const rows = await this.dataSource.query<{ state: string; attempt: number; n: number }[]>(
      `SELECT state, attempt, count(*)::int AS n FROM orders
       WHERE final_at >= to_timestamp($1 / 1000.0) AND final_at < to_timestamp($2 / 1000.0)
       GROUP BY state, attempt ORDER BY state, attempt LIMIT ${MAX_FINAL_COUNTS}`,
      [from, to],
    );
    return rows.map((r) => ({ state: r.state, attempt: r.attempt, count: r.n }));
  }

  /**
   * Times to final (created_at → final_at, ms) of the orders final in [from, to), the first MAX_FINALS_PER_MINUTE
   * by final_at (the final index's order): the sample the percentiles are taken from.
   */
  async finalDurations(from: number, to: number): Promise<number[]> {
    const rows = await this.dataSource.query<{ duration_ms: number }[]>(
      `SELECT ${ms('final_at')} - ${ms('created_at')} AS duration_ms FROM orders
       WHERE final_at >= to_timestamp($1 / 1000.0) AND final_at < to_timestamp($2 / 1000.0)
       ORDER BY final_at, id LIMIT ${MAX_FINALS_PER_MINUTE}`,
      [from, to],
    );
    return rows.map((r) => Math.max(0, r.duration_ms));
  }
}
