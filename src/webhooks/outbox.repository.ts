import { randomUUID } from 'node:crypto';
import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { EVENT_VERSIONS, type EventEnvelope, type EventType } from './webhook-events';

/** A new event id: `evt_` + 32 hex digits (random), the `webhook-id` of every send of the event. */
export function newEventId(): string {
  return `evt_${randomUUID().replaceAll('-', '')}`;
}

/** JSON with bigint values as decimal strings (u64 values never travel as JSON numbers). */
export function toJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
}

/** A feed position: the writing transaction's id and the insertion order (both decimal strings). */
export interface FeedPosition {
  xactId: string;
  position: string;
}

export interface OutboxRow {
  id: string;
  type: EventType;
  version: number;
  occurred_at: Date;
  payload: Record<string, unknown>;
  xact_id: string;
  position: string;
}

/** The envelope of a stored event: the webhook body and the feed item alike. */
export function envelopeOf(
  row: Pick<OutboxRow, 'id' | 'type' | 'version' | 'occurred_at' | 'payload'>,
): EventEnvelope {
  return {
    id: row.id,
    type: row.type,
    version: row.version,
    occurred_at: row.occurred_at.toISOString(),
    data: row.payload,
  };
}

/**
 * The feed page. ORDER BY names the table's columns: the bare names would be the text output aliases, and text order
 * (`1000` before `999`) made a page skip what sorted behind its cursor (found by the chaos run's feed audit).
 */
const FEED_SQL = `SELECT id, type, version, occurred_at, payload, xact_id::text AS xact_id, position::text AS position
  FROM outbox_events
  WHERE (client_id = $1::uuid OR ($2::boolean AND client_id IS NULL))
    AND xact_id < pg_snapshot_xmin(pg_current_snapshot())
    AND (xact_id, position) > ($3::xid8, $4::bigint)
  ORDER BY outbox_events.xact_id, outbox_events.position
  LIMIT $5`;

/** How many events one prune statement deletes at most (a pass repeats it). */
export const PRUNE_BATCH = 5_000;

/**
 * Deletes the oldest events (a prefix of the feed order, at most PRUNE_BATCH, up to the last one older than the
 * retention) and moves the horizon to the last deleted position. Deliveries of deleted events go with them (a
 * statement trigger, migrations/…-DeliveriesWithoutEventForeignKey.ts). Only finished transactions' rows (below xmin)
 * are considered, as in the feed.
 */
const PRUNE_SQL = `WITH head AS (
    SELECT xact_id, position, occurred_at FROM outbox_events
    WHERE xact_id < pg_snapshot_xmin(pg_current_snapshot())
    ORDER BY xact_id, position LIMIT ${PRUNE_BATCH}),
  cut AS (
    SELECT xact_id, position FROM head
    WHERE occurred_at < clock_timestamp() - make_interval(days => $1::int)
    ORDER BY xact_id DESC, position DESC LIMIT 1),
  gone AS (
    DELETE FROM outbox_events o USING cut
    WHERE (o.xact_id, o.position) <= (cut.xact_id, cut.position) RETURNING 1),
  horizon AS (
    INSERT INTO outbox_horizon AS h (singleton, xact_id, position, pruned_at)
    SELECT true, xact_id, position, clock_timestamp() FROM cut
    ON CONFLICT (singleton) DO UPDATE SET xact_id = EXCLUDED.xact_id, position = EXCLUDED.position,
      pruned_at = EXCLUDED.pruned_at
    WHERE (h.xact_id, h.position) < (EXCLUDED.xact_id, EXCLUDED.position))
  SELECT count(*)::int AS deleted FROM gone`;

/**
 * The outbox (`outbox_events`, `outbox_horizon`): the feed, pings, pruning. Events are appended by the outbox
 * triggers through the SQL function `outbox_append` (see WebhooksModule), never by a statement here.
 */
@Injectable()
export class OutboxRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** A ping: the event and its one delivery, to `endpointId` only (no filter applies). */
  async ping(clientId: string, endpointId: string): Promise<{ eventId: string; deliveryId: string }> {
    const eventId = newEventId();
    const rows = await this.dataSource.query<{ id: string }[]>(
      `WITH ev AS (
         INSERT INTO outbox_events (id, type, version, client_id, payload)
         VALUES ($1, 'webhook.ping', $2, $3::uuid, $4::jsonb) RETURNING id)
       INSERT INTO webhook_deliveries (endpoint_id, event_id, next_attempt_at)
       SELECT $5::uuid, ev.id, clock_timestamp() FROM ev RETURNING id`,
      [eventId, EVENT_VERSIONS['webhook.ping'], clientId, toJson({ endpoint_id: endpointId }), endpointId],
    );
    const deliveryId = rows[0]?.id;
    if (!deliveryId) throw new Error('ping insert returned nothing');
    return { eventId, deliveryId };
  }

  /** Up to `limit` events of the client (and operator events when `operator`) after `after`, in feed order. */
  async feed(clientId: string, operator: boolean, after: FeedPosition, limit: number): Promise<OutboxRow[]> {
    return this.dataSource.query<OutboxRow[]>(FEED_SQL, [
      clientId,
      operator,
      after.xactId,
      after.position,
      limit,
    ]);
  }

  /** The position of the last pruned event (null before the first pruning). */
  async horizon(): Promise<FeedPosition | null> {
    const [row] = await this.dataSource.query<{ xact_id: string; position: string }[]>(
      `SELECT xact_id::text AS xact_id, position::text AS position FROM outbox_horizon WHERE singleton`,
    );
    return row ? { xactId: row.xact_id, position: row.position } : null;
  }

  /** One prune batch; returns how many events it deleted. */
  async pruneBatch(retentionDays: number): Promise<number> {
    const [row] = await this.dataSource.query<{ deleted: number }[]>(PRUNE_SQL, [retentionDays]);
    return row?.deleted ?? 0;
  }
}
