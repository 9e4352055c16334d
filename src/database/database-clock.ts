import { Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** How often the estimate is measured again (drift of the monotonic clock against the database's: ppm). */
export const DATABASE_CLOCK_REFRESH_MS = 60_000;

/** One measurement: the database's clock at a local monotonic instant. */
export interface ClockAnchor {
  databaseMs: number;
  monotonicMs: number;
}

/**
 * The anchor of one round trip: the database read its clock somewhere between `sentAt` and `answeredAt`
 * (local monotonic ms), so it is placed at their midpoint; the error is at most half the round trip.
 */
export function anchorOf(databaseMs: number, sentAt: number, answeredAt: number): ClockAnchor {
  return { databaseMs, monotonicMs: (sentAt + answeredAt) / 2 };
}

/** The database's clock at local monotonic instant `monotonicMs`, from an anchor. */
export function databaseTimeAt(anchor: ClockAnchor, monotonicMs: number): number {
  return anchor.databaseMs + (monotonicMs - anchor.monotonicMs);
}

/**
 * The one clock of every value a replica compares with another replica's (issue 23 item 7): PostgreSQL's
 * `clock_timestamp()`, the clock sync passes, leases and order rows are stamped with. A replica's wall clock
 * may run minutes off (or jump); a `?fresh=true` observation stamped with it would hide later sync writes
 * (ahead) or be dropped as older than the row (behind), and checkout's give-up would fire at once or never.
 *
 * Reading the database for every stamp would cost a round trip, so the clock is measured (one
 * `SELECT clock_timestamp()` at bootstrap, then at most once a minute, in the background, when read) and
 * carried forward on the process's monotonic clock (`performance.now()`), which the wall clock's jumps do not
 * move. Error: half a round trip plus monotonic drift since the last measurement (sub-millisecond on a
 * local network). Until the first measurement (bootstrap awaits it) it falls back to the wall clock.
 */
@Injectable()
export class DatabaseClock implements OnApplicationBootstrap {
  private readonly logger = new Logger(DatabaseClock.name);
  private anchor: ClockAnchor = { databaseMs: Date.now(), monotonicMs: performance.now() };
  private measured = false;
  private measuring: Promise<void> | null = null;

  constructor(private readonly dataSource: DataSource) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.measure();
  }

  /** The database's time now (ms since the epoch), estimated; refreshes the estimate in the background when due. */
  nowMs(): number {
    const monotonic = performance.now();
    if (!this.measured || monotonic - this.anchor.monotonicMs > DATABASE_CLOCK_REFRESH_MS) {
      this.measure().catch((error: unknown) =>
        // The previous anchor stays in use; a database outage is reported by the requests that need it.
        this.logger.debug(`database clock not measured: ${(error as Error).message}`),
      );
    }
    return databaseTimeAt(this.anchor, monotonic);
  }

  /** The database's time now, as a Date. */
  now(): Date {
    return new Date(this.nowMs());
  }

  /** Measures the clock once (single-flight: concurrent callers share the round trip). */
  measure(): Promise<void> {
    this.measuring ??= this.roundTrip().finally(() => (this.measuring = null));
    return this.measuring;
  }

  private async roundTrip(): Promise<void> {
    const sentAt = performance.now();
    const rows = await this.dataSource.query<{ ms: number | string }[]>(
      `SELECT (extract(epoch FROM clock_timestamp()) * 1000)::float8 AS ms`,
    );
    const answeredAt = performance.now();
    this.anchor = anchorOf(Number(rows[0]?.ms), sentAt, answeredAt);
    this.measured = true;
  }
}
