import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { MinuteFigure, UpstreamDelta } from './status.aggregation';

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

  /** Adds this replica's upstream counts to the current minute's rows (the database clock decides the minute). */
  async addToCurrentMinute(instanceId: string, deltas: readonly UpstreamDelta[]): Promise<void> {
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

  /** Writes past minutes' database-derived figures; a row another replica wrote first is left as it is. */
  async writeOnce(figures: readonly MinuteFigure[]): Promise<void> {
    if (figures.length === 0) return;
    await this.dataSource.query(
      `INSERT INTO status_samples (figure, label, instance_id, minute, value)
       SELECT f.figure, f.label, '', to_timestamp(f.minute / 1000.0), f.value
       FROM unnest($1::text[], $2::text[], $3::float8[], $4::float8[]) AS f(figure, label, minute, value)
       ON CONFLICT (figure, minute, label, instance_id) DO NOTHING`,
      [
        figures.map((f) => f.figure),
        figures.map((f) => f.label),
        figures.map((f) => f.minute),
        figures.map((f) => f.value),
      ],
    );
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
