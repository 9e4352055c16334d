import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { MinuteDelta, MinuteFigure } from './status.aggregation';

/** A stored sample as read back (epoch ms of the minute's start, database clock). */
export interface StoredSample {
  figure: string;
  label: string;
  minute: number;
  value: number;
}

/**
 * The only code that reads or writes `status_samples` (migration CreateStatusSamples): one row per minute per
 * figure and label, per replica for per-process counters. Minutes are the database clock.
 */
@Injectable()
export class StatusSampleRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Adds this replica's counts (upstream attempts, accuracy samples, staleness sums) to the current minute's rows
   * (the database clock decides the minute).
   */
  async addToCurrentMinute(instanceId: string, deltas: readonly MinuteDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    await this.dataSource.query(
      `INSERT INTO status_samples (figure, label, instance_id, minute, value)
       SELECT d.figure, d.label, $1, date_trunc('minute', now()), d.value
       FROM unnest($2::text[], $3::text[], $4::float8[]) AS d(figure, label, value)
       ON CONFLICT (figure, minute, label, instance_id)
       DO UPDATE SET value = status_samples.value + EXCLUDED.value`,
      [instanceId, deltas.map((d) => d.figure), deltas.map((d) => d.label), deltas.map((d) => d.value)],
    );
  }

  /**
   * Writes one past minute's database-derived figures all or nothing, in one statement: the marker first, the
   * other figures only if this statement inserted it. Replicas racing on a minute (each having read its own set of
   * finals) thus store one replica's complete set, never a mix; the loser's statement writes nothing. True when
   * this call stored the minute.
   */
  async writeOnce(marker: MinuteFigure, figures: readonly MinuteFigure[]): Promise<boolean> {
    const other = figures.find((f) => f.minute !== marker.minute || f.figure === marker.figure);
    if (other) throw new Error(`writeOnce: ${other.figure} is not another figure of the marker's minute`);
    const rows = await this.dataSource.query<{ stored: boolean }[]>(
      `WITH m AS (
         INSERT INTO status_samples (figure, label, instance_id, minute, value)
         VALUES ($1, $2, '', to_timestamp($3 / 1000.0), $4)
         ON CONFLICT (figure, minute, label, instance_id) DO NOTHING
         RETURNING minute
       ), f AS (
         INSERT INTO status_samples (figure, label, instance_id, minute, value)
         SELECT f.figure, f.label, '', m.minute, f.value
         FROM m, unnest($5::text[], $6::text[], $7::float8[]) AS f(figure, label, value)
         -- A row left by an older replica's row-by-row write (rolling deploy) is no error.
         ON CONFLICT (figure, minute, label, instance_id) DO NOTHING
       )
       SELECT EXISTS (SELECT 1 FROM m) AS stored`,
      [
        marker.figure,
        marker.label,
        marker.minute,
        marker.value,
        figures.map((f) => f.figure),
        figures.map((f) => f.label),
        figures.map((f) => f.value),
      ],
    );
    return rows[0]?.stored ?? false;
  }

  /** Minutes (epoch ms) from `from` on for which `figure` has a row (the recorder's "already recorded"). */
  async recordedMinutes(figure: string, from: number): Promise<Set<number>> {
    const rows = await this.dataSource.query<{ minute: number }[]>(
      `SELECT DISTINCT (extract(epoch FROM minute) * 1000)::float8 AS minute
       FROM status_samples WHERE figure = $1 AND minute >= to_timestamp($2 / 1000.0)`,
      [figure, from],
    );
    return new Set(rows.map((r) => r.minute));
  }

  /** Every sample of `figures` from the minute `from` on (all replicas and labels; summed by the caller). */
  async read(figures: readonly string[], from: number): Promise<StoredSample[]> {
    const rows = await this.dataSource.query<StoredSample[]>(
      `SELECT figure, label, (extract(epoch FROM minute) * 1000)::float8 AS minute, value
       FROM status_samples WHERE figure = ANY($1::text[]) AND minute >= to_timestamp($2 / 1000.0)
       ORDER BY minute`,
      [figures, from],
    );
    return rows;
  }

  /** Deletes the samples of minutes before `cutoff` (epoch ms). */
  async prune(cutoff: number): Promise<void> {
    await this.dataSource.query(`DELETE FROM status_samples WHERE minute < to_timestamp($1 / 1000.0)`, [
      cutoff,
    ]);
  }
}
