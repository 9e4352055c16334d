import { Inject, Injectable } from '@nestjs/common';
import { PG_POOL } from '../database/database.module';
import type { Sql } from './sql';
import type { SyncPassStatus, SyncResource } from './sync-pass.entity';
import { namedLeaseCovers } from '../durable-work/named-lease.repository';

/** A pass as the service and the operator API see it. */
/** The error of a running pass marked failed because its lease no longer covers it (failAbandoned). */
export const ABANDONED_PASS_ERROR =
  'abandoned: its holder stopped renewing the lease (process died or lost the database)';

export interface SyncPassRecord {
  id: string;
  resource: SyncResource;
  scopeEventId: string | null;
  status: SyncPassStatus;
  trigger: string;
  startedAt: Date;
  finishedAt: Date | null;
  pages: number;
  items: number;
  upserted: number;
  removed: number;
  skipped: number;
  error: string | null;
  holder: string;
  fencingToken: string;
}

interface PassRow {
  id: string;
  resource: SyncResource;
  scope_event_id: string | null;
  status: SyncPassStatus;
  trigger: string;
  started_at: Date;
  finished_at: Date | null;
  pages: string;
  items: string;
  upserted: string;
  removed: string;
  skipped: string;
  error: string | null;
  holder: string;
  fencing_token: string;
}

const COLUMNS = `id::text, resource, scope_event_id::text, status, trigger, started_at, finished_at, pages, items,
  upserted, removed, skipped, error, holder, fencing_token::text`;

function toRecord(r: PassRow): SyncPassRecord {
  return {
    id: r.id,
    resource: r.resource,
    scopeEventId: r.scope_event_id,
    status: r.status,
    trigger: r.trigger,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    pages: Number(r.pages),
    items: Number(r.items),
    upserted: Number(r.upserted),
    removed: Number(r.removed),
    skipped: Number(r.skipped),
    error: r.error,
    holder: r.holder,
    fencingToken: r.fencing_token,
  };
}

export interface PageCounters {
  pages: number;
  items: number;
  upserted: number;
  skipped: number;
}

/**
 * Every write of `sync_passes` (a pass's start, progress, finish, reaping) and the pass reads of the sync and its
 * operator API. Other reads stay in catalog-sync: the status page's figures (sync-pass-figures.repository.ts), the
 * mirror's last-completed-pass stamps (catalog-mirror.repository.ts, event-demand.repository.ts,
 * listing.repository.ts); the outbox trigger on `sync_passes` announces a finished pass (webhooks).
 */
@Injectable()
export class SyncPassRepository {
  /** The app's pg pool in the module (PG_POOL); tests and benches may pass a pool or a held client. */
  constructor(@Inject(PG_POOL) private readonly sql: Sql) {}

  async create(
    db: Sql,
    pass: {
      resource: SyncResource;
      scopeEventId: bigint | null;
      trigger: string;
      holder: string;
      fencingToken: string;
    },
  ): Promise<SyncPassRecord> {
    const { rows } = await db.query<PassRow>(
      `INSERT INTO sync_passes (resource, scope_event_id, status, trigger, holder, fencing_token)
       VALUES ($1, $2, 'running', $3, $4, $5) RETURNING ${COLUMNS}`,
      [pass.resource, pass.scopeEventId?.toString() ?? null, pass.trigger, pass.holder, pass.fencingToken],
    );
    return toRecord(rows[0]);
  }

  /**
   * failAbandoned and create in ONE statement (a one-page walk's round trips): the running passes the leases
   * no longer cover are marked failed, and the new pass is recorded (its own lease row, claimed earlier in the
   * transaction, covers nothing yet: the new row is not in the statement's snapshot either way).
   */
  async createReaping(
    db: Sql,
    pass: Parameters<SyncPassRepository['create']>[1],
  ): Promise<{ pass: SyncPassRecord; abandoned: { id: string; resource: SyncResource }[] }> {
    const { rows } = await db.query<PassRow & { abandoned: { id: string; resource: SyncResource }[] | null }>(
      `WITH reaped AS (
         UPDATE sync_passes p SET status = 'failed', finished_at = clock_timestamp(), error = $6
         WHERE p.status = 'running' AND NOT ${namedLeaseCovers('p.id', 'p.fencing_token')}
         RETURNING p.id::text AS id, p.resource
       ), created AS (
         INSERT INTO sync_passes (resource, scope_event_id, status, trigger, holder, fencing_token)
         VALUES ($1, $2, 'running', $3, $4, $5) RETURNING *
       )
       SELECT ${COLUMNS}, (SELECT json_agg(reaped) FROM reaped) AS abandoned FROM created`,
      [
        pass.resource,
        pass.scopeEventId?.toString() ?? null,
        pass.trigger,
        pass.holder,
        pass.fencingToken,
        ABANDONED_PASS_ERROR,
      ],
    );
    return { pass: toRecord(rows[0]), abandoned: rows[0].abandoned ?? [] };
  }

  /** Adds one page's counters (inside the page's transaction). */
  async addPages(db: Sql, id: string, written: PageCounters): Promise<void> {
    await db.query(
      `UPDATE sync_passes SET pages = pages + $2, items = items + $3, upserted = upserted + $4,
         skipped = skipped + $5 WHERE id = $1`,
      [id, written.pages, written.items, written.upserted, written.skipped],
    );
  }

  /** Ends a running pass; false when it was no longer running (e.g. marked failed by a takeover). */
  async finish(
    db: Sql,
    id: string,
    status: Exclude<SyncPassStatus, 'running'>,
    outcome: { removed?: number; error?: string | null },
  ): Promise<boolean> {
    const result = await db.query(
      `UPDATE sync_passes SET status = $2, finished_at = clock_timestamp(), removed = removed + $3, error = $4
       WHERE id = $1 AND status = 'running'`,
      [id, status, outcome.removed ?? 0, outcome.error ?? null],
    );
    return result.rowCount === 1;
  }

  /**
   * Marks failed every running pass whose lease no longer covers it (expired, released or taken over):
   * its holder died or lost the job. Returns the ids.
   */
  async failAbandoned(db: Sql = this.sql): Promise<{ id: string; resource: SyncResource }[]> {
    const { rows } = await db.query<{ id: string; resource: SyncResource }>(
      `UPDATE sync_passes p SET status = 'failed', finished_at = clock_timestamp(), error = $1
       WHERE p.status = 'running' AND NOT ${namedLeaseCovers('p.id', 'p.fencing_token')}
       RETURNING p.id::text, p.resource`,
      [ABANDONED_PASS_ERROR],
    );
    return rows;
  }

  /**
   * Deletes finished per-event passes (walks) older than `olderThanMs`, at most `limit` a call: hot walks write
   * about a thousand rows a minute. Full passes are kept (their history is the operator's view).
   */
  async pruneEventWalks(olderThanMs: number, limit: number): Promise<number> {
    const result = await this.sql.query(
      `DELETE FROM sync_passes WHERE id IN (
         SELECT id FROM sync_passes WHERE resource = 'event_listings' AND status IN ('completed', 'failed', 'cancelled')
           AND finished_at < now() - make_interval(secs => $1::float8 / 1000) LIMIT $2)`,
      [olderThanMs, limit],
    );
    return result.rowCount ?? 0;
  }

  async get(id: string): Promise<SyncPassRecord | null> {
    if (!/^[0-9]{1,18}$/.test(id)) return null;
    const { rows } = await this.sql.query<PassRow>(`SELECT ${COLUMNS} FROM sync_passes WHERE id = $1`, [id]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async lastCompleted(resource: SyncResource): Promise<SyncPassRecord | null> {
    const { rows } = await this.sql.query<PassRow>(
      `SELECT ${COLUMNS} FROM sync_passes WHERE resource = $1 AND status = 'completed'
       ORDER BY finished_at DESC, id DESC LIMIT 1`,
      [resource],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async running(resource: SyncResource): Promise<SyncPassRecord[]> {
    const { rows } = await this.sql.query<PassRow>(
      `SELECT ${COLUMNS} FROM sync_passes WHERE resource = $1 AND status = 'running' ORDER BY id DESC LIMIT 20`,
      [resource],
    );
    return rows.map(toRecord);
  }

  async recentFailures(resource: SyncResource, limit: number): Promise<SyncPassRecord[]> {
    const { rows } = await this.sql.query<PassRow>(
      `SELECT ${COLUMNS} FROM sync_passes WHERE resource = $1 AND status IN ('failed', 'cancelled')
       ORDER BY id DESC LIMIT $2`,
      [resource, limit],
    );
    return rows.map(toRecord);
  }
}
