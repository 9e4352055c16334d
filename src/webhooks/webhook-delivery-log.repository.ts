import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { LEASE_FREE } from '../durable-work/lease.sql';
import { firstRow, isUuid } from './webhook-endpoint.repository';
import type { EventType } from './webhook-events';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

/** A delivery as the log shows it (with its event's type). */
export interface DeliveryRow {
  id: string;
  endpoint_id: string;
  event_id: string;
  event_type: EventType;
  status: DeliveryStatus;
  attempts: number;
  next_attempt_at: Date | null;
  last_attempt_at: Date | null;
  last_status_code: number | null;
  last_error: string | null;
  last_duration_ms: number | null;
  delivered_at: Date | null;
  created_at: Date;
  created_key: string;
}

const LOG_COLUMNS = `d.id, d.endpoint_id, d.event_id, ev.type AS event_type, d.status, d.attempts, d.next_attempt_at,
  d.last_attempt_at, d.last_status_code, d.last_error, d.last_duration_ms, d.delivered_at, d.created_at,
  d.created_at::text AS created_key`;

/**
 * The delivery log of `webhook_deliveries` (owned by webhooks/) as the endpoints API shows it: an endpoint's
 * deliveries page by page, one delivery, and the manual retry and recover that make deliveries pending again —
 * never one a sender holds (LEASE_FREE). The senders' side is WebhookDeliveryRepository.
 */
@Injectable()
export class WebhookDeliveryLogRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** The endpoint's deliveries, newest first, `limit + 1` after the keyset position (created_at, id). */
  async page(
    endpointId: string,
    limit: number,
    after: [string, string] | null,
    status: DeliveryStatus | undefined,
  ): Promise<DeliveryRow[]> {
    return this.dataSource.query<DeliveryRow[]>(
      `SELECT ${LOG_COLUMNS} FROM webhook_deliveries d JOIN outbox_events ev ON ev.id = d.event_id
       WHERE d.endpoint_id = $1::uuid AND ($2::text IS NULL OR d.status = $2)
         AND ($3::timestamptz IS NULL OR (d.created_at, d.id) < ($3::timestamptz, $4::uuid))
       ORDER BY d.created_at DESC, d.id DESC LIMIT $5`,
      [endpointId, status ?? null, after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
  }

  /**
   * A manual retry: the delivery is pending and due now (attempts kept), unless a sender holds it right now
   * ('busy'). Null when the endpoint has no such delivery.
   */
  async retry(endpointId: string, id: string): Promise<DeliveryRow | 'busy' | null> {
    if (!isUuid(id)) return null;
    const updated = await this.dataSource.query<[unknown[], number] | unknown[]>(
      `UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = clock_timestamp(), updated_at = clock_timestamp()
       WHERE id = $1::uuid AND endpoint_id = $2::uuid AND ${LEASE_FREE} RETURNING id`,
      [id, endpointId],
    );
    const row = await this.one(endpointId, id);
    if (!row) return null;
    return firstRow(updated) === null ? 'busy' : row;
  }

  /**
   * Where `since` stands against the database clock: after now, or before the oldest events the outbox keeps
   * (`retentionDays`), so that every replica judges a recover's `since` by the same clock.
   */
  async sinceBounds(since: string, retentionDays: number): Promise<{ future: boolean; pruned: boolean }> {
    const [row] = await this.dataSource.query<{ future: boolean; pruned: boolean }[]>(
      `SELECT $1::timestamptz > clock_timestamp() AS future,
         $1::timestamptz < clock_timestamp() - make_interval(days => $2::int) AS pruned`,
      [since, retentionDays],
    );
    return { future: row.future, pruned: row.pruned };
  }

  /**
   * Recover: the endpoint's failed (given-up) deliveries created at or after `since` are pending and due now, at
   * most `max` of them, oldest first, in one statement (the log index bounds it to this endpoint's rows since
   * then). Attempts are kept: past the schedule each gets one more try. Returns how many were re-queued. `since`
   * is RFC 3339 text, read by PostgreSQL to the microsecond (a JS Date would round it to the millisecond).
   */
  async recover(endpointId: string, since: string, max: number): Promise<number> {
    const [row] = await this.dataSource.query<{ n: number }[]>(
      `WITH r AS (
         UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = clock_timestamp(),
           updated_at = clock_timestamp()
         WHERE id IN (
             SELECT id FROM webhook_deliveries
             WHERE endpoint_id = $1::uuid AND created_at >= $2::timestamptz AND status = 'failed'
             ORDER BY created_at, id LIMIT $3)
           -- Checked again on the row as updated: a concurrent recover re-queues (and counts) each row once.
           AND status = 'failed' AND ${LEASE_FREE}
         RETURNING id)
       SELECT count(*)::int AS n FROM r`,
      [endpointId, since, max],
    );
    return row?.n ?? 0;
  }

  async one(endpointId: string, id: string): Promise<DeliveryRow | null> {
    if (!isUuid(id)) return null;
    const [row] = await this.dataSource.query<DeliveryRow[]>(
      `SELECT ${LOG_COLUMNS} FROM webhook_deliveries d JOIN outbox_events ev ON ev.id = d.event_id
       WHERE d.id = $1::uuid AND d.endpoint_id = $2::uuid`,
      [id, endpointId],
    );
    return row ?? null;
  }
}
