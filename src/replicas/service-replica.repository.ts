import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { ReplicaRow } from './replica-budget';

/** Rows of replicas not seen for this long are deleted (the status page shows replicas of the last minutes). */
export const REPLICA_RETENTION_MS = 3_600_000;

/** A replica as the status page lists it (epoch ms, database clock). */
export interface ReplicaSeen {
  instanceId: string;
  version: string;
  startedAt: number;
  seenAt: number;
  stopped: boolean;
}

interface RawRow {
  instance_id: string;
  seen_ms_ago: number;
  stopped: boolean;
  throttle_factor: number | null;
  throttled_ms_ago: number | null;
  paused_for_ms: number;
}

/**
 * Every statement on `service_replicas` (one row per service process; migration CreateServiceReplicas): the
 * heartbeat, the shared 429s, and the list the status page asks ReplicasService for. Every time is the database clock: `now()` writes them and ages are computed by the
 * database, so replicas with skewed clocks agree on who is live and how old a 429 is.
 */
@Injectable()
export class ServiceReplicaRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * One heartbeat, one statement: this replica's row is created (started now) or marked seen now, rows not seen
   * for REPLICA_RETENTION_MS are deleted, and every other row is read with its ages. (The read sees the table as
   * the statement began: a row deleted by it still appears once, long dead.)
   */
  async beat(instanceId: string, version: string): Promise<ReplicaRow[]> {
    const rows = await this.dataSource.query<RawRow[]>(
      `WITH beat AS (
         INSERT INTO service_replicas (instance_id, version) VALUES ($1, $2)
         ON CONFLICT (instance_id) DO UPDATE SET seen_at = now(), stopped_at = NULL
       ), gone AS (
         DELETE FROM service_replicas
         WHERE seen_at < now() - make_interval(secs => $3::float8 / 1000) AND instance_id <> $1
       )
       SELECT instance_id,
         (extract(epoch FROM now() - seen_at) * 1000)::float8 AS seen_ms_ago,
         stopped_at IS NOT NULL AS stopped,
         throttle_factor,
         (extract(epoch FROM now() - throttled_at) * 1000)::float8 AS throttled_ms_ago,
         COALESCE(GREATEST(0, extract(epoch FROM paused_until - now()) * 1000), 0)::float8 AS paused_for_ms
       FROM service_replicas WHERE instance_id <> $1`,
      [instanceId, version, REPLICA_RETENTION_MS],
    );
    return rows.map((row) => ({
      instanceId: row.instance_id,
      seenMsAgo: row.seen_ms_ago,
      stopped: row.stopped,
      throttleFactor: row.throttle_factor,
      throttledMsAgo: row.throttled_ms_ago,
      pausedForMs: row.paused_for_ms,
    }));
  }

  /**
   * This replica got a 429: the fraction of its maximum rate it lowered to, now, and a pause of `pauseMs` from now
   * (kept when a longer one is still running; none given: the current pause stays).
   */
  async publishThrottle(instanceId: string, factor: number, pauseMs: number | undefined): Promise<void> {
    await this.dataSource.query(
      `UPDATE service_replicas SET throttle_factor = $2, throttled_at = now(),
         paused_until = CASE WHEN $3::float8 IS NULL THEN paused_until
           ELSE GREATEST(COALESCE(paused_until, now()), now() + make_interval(secs => $3::float8 / 1000)) END
       WHERE instance_id = $1`,
      [instanceId, factor, pauseMs ?? null],
    );
  }

  /** A graceful shutdown: the others stop counting this replica at their next heartbeat. */
  async markStopped(instanceId: string): Promise<void> {
    await this.dataSource.query(`UPDATE service_replicas SET stopped_at = now() WHERE instance_id = $1`, [
      instanceId,
    ]);
  }

  /** Replicas seen in the last `withinMs` (stopped ones included, marked), at most 50, oldest start first. */
  async seen(withinMs: number): Promise<ReplicaSeen[]> {
    const rows = await this.dataSource.query<
      { instance_id: string; version: string; started_at: number; seen_at: number; stopped: boolean }[]
    >(
      `SELECT instance_id, version, (extract(epoch FROM started_at) * 1000)::float8 AS started_at,
         (extract(epoch FROM seen_at) * 1000)::float8 AS seen_at, stopped_at IS NOT NULL AS stopped
       FROM service_replicas WHERE seen_at > now() - make_interval(secs => $1::float8 / 1000)
       ORDER BY started_at, instance_id LIMIT 50`,
      [withinMs],
    );
    return rows.map((r) => ({
      instanceId: r.instance_id,
      version: r.version,
      startedAt: r.started_at,
      seenAt: r.seen_at,
      stopped: r.stopped,
    }));
  }
}
