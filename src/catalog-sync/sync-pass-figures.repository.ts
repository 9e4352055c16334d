import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A full pass as the status page draws it (epoch ms, database clock). */
export interface PassFigure {
  id: string;
  resource: 'events' | 'listings';
  status: string;
  trigger: string;
  startedAt: number;
  finishedAt: number | null;
  items: number;
  error: string | null;
}

/** Bound of the passes drawn over 24 h (a pass a minute per resource is 2,880). */
const MAX_PASSES = 3_000;

const ms = (column: string): string => `(extract(epoch FROM ${column}) * 1000)::float8`;

/**
 * Read-only figures of `sync_passes` that the status page asks for through CatalogSyncService (docs/status.md
 * "Where the figures come from"): each statement reads the sync-pass indexes and returns a bounded number of rows;
 * none writes, locks or claims.
 */
@Injectable()
export class SyncPassFiguresRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The latest pass of each full resource, whatever its outcome. */
  async lastPasses(): Promise<PassFigure[]> {
    return this.passes(
      `SELECT p.* FROM unnest(ARRAY['events', 'listings']) AS r(resource),
         LATERAL (SELECT * FROM sync_passes s WHERE s.resource = r.resource ORDER BY id DESC LIMIT 1) p`,
      [],
    );
  }

  /** The latest completed pass of each full resource. */
  async lastCompletedPasses(): Promise<PassFigure[]> {
    return this.passes(
      `SELECT p.* FROM unnest(ARRAY['events', 'listings']) AS r(resource),
         LATERAL (SELECT * FROM sync_passes s WHERE s.resource = r.resource AND s.status = 'completed'
                  ORDER BY finished_at DESC, id DESC LIMIT 1) p`,
      [],
    );
  }

  /** Full passes that finished from `from` (epoch ms) on, oldest first. */
  async passesSince(from: number): Promise<PassFigure[]> {
    return this.passes(
      `SELECT * FROM (
         SELECT * FROM sync_passes WHERE resource IN ('events', 'listings')
           AND status IN ('completed', 'failed', 'cancelled') AND finished_at >= to_timestamp($1 / 1000.0)
         ORDER BY finished_at DESC LIMIT ${MAX_PASSES}) p ORDER BY finished_at`,
      [from],
    );
  }

  private async passes(sql: string, params: unknown[]): Promise<PassFigure[]> {
    const rows = await this.dataSource.query<
      {
        id: string;
        resource: 'events' | 'listings';
        status: string;
        trigger: string;
        started_at: number;
        finished_at: number | null;
        items: string;
        error: string | null;
      }[]
    >(
      `SELECT id::text, resource, status, trigger, ${ms('started_at')} AS started_at,
         ${ms('finished_at')} AS finished_at, items::text, error FROM (${sql}) q`,
      params,
    );
    return rows.map((r) => ({
      id: r.id,
      resource: r.resource,
      status: r.status,
      trigger: r.trigger,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      items: Number(r.items),
      error: r.error,
    }));
  }
}
