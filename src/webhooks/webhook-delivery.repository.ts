import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { WebhooksConfig } from '../config/webhooks.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import type { LeaseQueue } from '../durable-work/lease-queue';
import { DROP_LEASE, fenced } from '../durable-work/lease.sql';
import type { AfterFailure } from './delivery.schedule';
import { firstRow } from './webhook-endpoint.repository';
import type { EventType } from './webhook-events';
import { WriteBatch } from './write-batch';

/** A claimed delivery with what one send needs: the endpoint (secrets sealed) and the event. */
export interface SendableDelivery {
  id: string;
  token: string;
  attempts: number;
  endpointId: string;
  /**
   * The send slot it reserved and was given back to wait for (rate_limit; microseconds, as text), else null: it is
   * sent without reserving another, once the slot has come (`slotLater` false).
   */
  heldSlot: string | null;
  slotLater: boolean;
  /** Null when the endpoint was deleted meanwhile. */
  endpoint: {
    url: string;
    enabled: boolean;
    /** It has a rate_limit: each send reserves a slot first. */
    rateLimited: boolean;
    secret: Buffer;
    /** The rotated-out secret while its grace period runs, else null. */
    previousSecret: Buffer | null;
  } | null;
  event: {
    id: string;
    type: EventType;
    version: number;
    occurred_at: Date;
    payload: Record<string, unknown>;
  };
}

/** How a try ended, as recorded. */
export interface TryRecord {
  statusCode: number | null;
  error: string | null;
  durationMs: number;
}

/**
 * What one send needs, read in the claim's own statement (QueueSpec.claimSelect, over the claimed rows as
 * `claimed`): the endpoint (secrets sealed; null when deleted meanwhile) and the event. One statement per claim
 * instead of one more query per delivery (docs/BENCHMARKS.md, "Session 15: webhook delivery").
 */
const SENDABLE_SELECT = `SELECT d.id, d.lease_token, d.lease_expired_owner, d.attempts, d.endpoint_id, e.url, e.enabled,
      e.rate_limit IS NOT NULL AS rate_limited, d.send_slot_at::text AS held_slot,
      d.send_slot_at > clock_timestamp() AS slot_later, e.secret,
      CASE WHEN e.previous_secret_until > clock_timestamp() THEN e.previous_secret END AS previous_secret,
      ev.id AS event_id, ev.type, ev.version, ev.occurred_at, ev.payload
    FROM claimed d
    LEFT JOIN outbox_events ev ON ev.id = d.event_id
    LEFT JOIN webhook_endpoints e ON e.id = d.endpoint_id`;

/** A row of SENDABLE_SELECT. */
interface SendableRow {
  id: string;
  lease_token: string | number;
  attempts: number;
  endpoint_id: string;
  url: string | null;
  enabled: boolean | null;
  rate_limited: boolean | null;
  held_slot: string | null;
  slot_later: boolean | null;
  secret: Buffer | null;
  previous_secret: Buffer | null;
  event_id: string | null;
  type: EventType;
  version: number;
  occurred_at: Date;
  payload: Record<string, unknown>;
}

/** A claimed row as a send needs it; null when its event is gone (pruned): nothing to send. */
function sendableOf(row: SendableRow): SendableDelivery | null {
  if (row.event_id === null) return null;
  return {
    id: row.id,
    token: String(row.lease_token),
    attempts: row.attempts,
    endpointId: row.endpoint_id,
    heldSlot: row.held_slot,
    slotLater: row.slot_later === true,
    endpoint:
      row.url === null || row.secret === null
        ? null
        : {
            url: row.url,
            enabled: row.enabled === true,
            rateLimited: row.rate_limited === true,
            secret: row.secret,
            previousSecret: row.previous_secret,
          },
    event: {
      id: row.event_id,
      type: row.type,
      version: row.version,
      occurred_at: row.occurred_at,
      payload: row.payload,
    },
  };
}

/** A delivered try waiting for its batch's statement. */
interface DeliveredTry {
  claim: { id: string; token: string };
  record: TryRecord;
}

/** Longest `last_error` kept (the column's CHECK allows 1000). */
const LAST_ERROR_MAX = 600;

/**
 * Deliveries (`webhook_deliveries`, owned by webhooks/) as durable work on the block's queue: claims and what a
 * sender records (a fencing token per claim; every write of a sender is fenced by its token). The delivery log
 * the endpoints API shows and re-queues is webhook-delivery-log.repository.ts.
 */
@Injectable()
export class WebhookDeliveryRepository {
  readonly queue: LeaseQueue;
  private readonly deliveredBatch = new WriteBatch((items: DeliveredTry[]) => this.deliveredMany(items));

  constructor(
    private readonly dataSource: DataSource,
    work: DurableWorkService,
    config: WebhooksConfig,
  ) {
    this.queue = work.queue({
      name: 'webhook_deliveries',
      table: 'webhook_deliveries',
      dueFilter: `status = 'pending'`,
      wakeFilter: `status = 'pending'`,
      // Counts the try this claim starts: a sender that dies mid-send has used one.
      claimSet: `attempts = t.attempts + 1`,
      // Fair by construction: an endpoint and a client hold at most their share of the sends in flight, and the
      // claims go round-robin between endpoints (a dead endpoint's 10,000 due deliveries wait their turn).
      fair: {
        group: 'endpoint_id',
        cap: config.WEBHOOKS_ENDPOINT_MAX_IN_FLIGHT,
        ownerOf: (g) => `(SELECT client_id FROM webhook_endpoints WHERE id = ${g})`,
        ownerCap: config.WEBHOOKS_CLIENT_MAX_IN_FLIGHT,
      },
      claimSelect: SENDABLE_SELECT,
      // The worker refills (a pass as soon as a send ends) on every replica: claims run one at a time so the caps
      // above hold exactly across replicas and between passes and wake-ups.
      serialClaims: true,
    });
  }

  /**
   * Claims up to `limit` due deliveries for `leaseMs`, each with what its send needs (one statement). A delivery
   * whose event is gone (pruned) is left out; its lease runs out.
   */
  async claimDue(limit: number, leaseMs: number): Promise<SendableDelivery[]> {
    const rows = (await this.queue.claimDue(limit, leaseMs)) as unknown as SendableRow[];
    return rows.map(sendableOf).filter((d) => d !== null);
  }

  /**
   * Claims delivery `id` now (a ping or a manual retry) when it is pending and free and its endpoint and client
   * have room under their in-flight caps; counts the try. Null otherwise: the delivery is due and a pass takes it.
   */
  async claimOne(id: string, leaseMs: number): Promise<SendableDelivery | null> {
    const row = await this.queue.claimOne(id, leaseMs, [], 'attempts = t.attempts + 1');
    return row ? sendableOf(row as unknown as SendableRow) : null;
  }

  /**
   * A 2xx: delivered; the endpoint's failure run ends. False when the claim is no longer current (fenced off).
   * Sends that end close together are recorded by one statement (WriteBatch), each row still fenced by its own token.
   */
  delivered(claim: { id: string; token: string }, record: TryRecord): Promise<boolean> {
    return this.deliveredBatch.add({ claim, record });
  }

  /** One statement for a batch of delivered tries: whether each claim was current, in the batch's order. */
  private async deliveredMany(items: DeliveredTry[]): Promise<boolean[]> {
    const rows = await this.dataSource.query<{ id: string }[]>(
      `WITH v AS (
         SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::int[], $4::int[]) AS v(id, token, code, duration_ms)),
       d AS (
         UPDATE webhook_deliveries t SET status = 'delivered', delivered_at = clock_timestamp(),
           last_attempt_at = clock_timestamp(), last_status_code = v.code, last_error = NULL,
           last_duration_ms = v.duration_ms, next_attempt_at = NULL, send_slot_at = NULL,
           updated_at = clock_timestamp(), ${DROP_LEASE}
         FROM v WHERE t.id = v.id AND ${fenced('v.token')} RETURNING t.id, t.endpoint_id),
       -- In id order, so two replicas' batches ending failure runs of the same endpoints cannot deadlock.
       ended AS (
         SELECT id FROM webhook_endpoints
         WHERE id IN (SELECT endpoint_id FROM d) AND failing_since IS NOT NULL ORDER BY id FOR UPDATE),
       e AS (UPDATE webhook_endpoints SET failing_since = NULL WHERE id IN (SELECT id FROM ended))
       SELECT id::text FROM d`,
      [
        items.map((i) => i.claim.id),
        items.map((i) => i.claim.token),
        items.map((i) => i.record.statusCode),
        items.map((i) => i.record.durationMs),
      ],
    );
    const current = new Set(rows.map((r) => r.id));
    for (let i = 0; i < items.length; i++) this.queue.released();
    return items.map((i) => current.has(i.claim.id));
  }

  /**
   * A failed try: due again after the schedule's delay, or failed. The endpoint's failure run starts (if it had
   * not) and, when it has lasted `disableAfterHours`, the endpoint is disabled with the reason. Returns whether
   * the claim was current and whether this failure disabled the endpoint.
   */
  async failed(
    claim: { id: string; token: string },
    record: TryRecord,
    after: AfterFailure,
    disableAfterHours: number,
  ): Promise<{ recorded: boolean; endpointDisabled: boolean }> {
    const final = after.kind === 'failed';
    const delayMs = after.kind === 'retry' ? after.delayMs : 0;
    const [row] = await this.dataSource.query<{ n: number; disabled: boolean | null }[]>(
      `WITH d AS (
         UPDATE webhook_deliveries SET status = CASE WHEN $5::boolean THEN 'failed' ELSE 'pending' END,
           next_attempt_at = CASE WHEN $5::boolean THEN NULL
             ELSE clock_timestamp() + make_interval(secs => $6::float8 / 1000) END,
           last_attempt_at = clock_timestamp(), last_status_code = $3, last_error = $4, last_duration_ms = $7,
           send_slot_at = NULL, updated_at = clock_timestamp(), ${DROP_LEASE}
         WHERE id = $1::uuid AND ${fenced('$2')} RETURNING endpoint_id),
       e AS (
         UPDATE webhook_endpoints SET failing_since = COALESCE(failing_since, clock_timestamp()),
           enabled = false, disabled_at = clock_timestamp(),
           disabled_reason = 'every delivery failed since ' || to_char(failing_since AT TIME ZONE 'UTC',
             'YYYY-MM-DD"T"HH24:MI:SS"Z"') || ' (more than ' || $8::int || ' h); last: ' || left(COALESCE($4, 'no answer'), 200)
         WHERE id IN (SELECT endpoint_id FROM d) AND enabled
           AND failing_since < clock_timestamp() - make_interval(hours => $8::int)
         RETURNING id),
       f AS (
         UPDATE webhook_endpoints SET failing_since = clock_timestamp()
         WHERE id IN (SELECT endpoint_id FROM d) AND failing_since IS NULL AND id NOT IN (SELECT id FROM e))
       SELECT (SELECT count(*)::int FROM d) AS n, EXISTS (SELECT 1 FROM e) AS disabled`,
      [
        claim.id,
        claim.token,
        record.statusCode,
        record.error === null ? null : record.error.slice(0, LAST_ERROR_MAX),
        final,
        delayMs,
        record.durationMs,
        disableAfterHours,
      ],
    );
    this.queue.released();
    return { recorded: (row?.n ?? 0) === 1, endpointDisabled: row?.disabled === true };
  }

  /** Not sent (endpoint disabled or deleted): failed with `reason`, fenced like any other finish. */
  async abandoned(claim: { id: string; token: string }, reason: string): Promise<boolean> {
    const rows = await this.dataSource.query<[unknown[], number] | unknown[]>(
      `UPDATE webhook_deliveries SET status = 'failed', next_attempt_at = NULL, send_slot_at = NULL, last_error = $3,
         updated_at = clock_timestamp(), ${DROP_LEASE}
       WHERE id = $1::uuid AND ${fenced('$2')} RETURNING id`,
      [claim.id, claim.token, reason],
    );
    this.queue.released();
    return firstRow(rows) !== null;
  }

  /**
   * Not sent yet: its endpoint's rate_limit gave it a later send slot. Given back due at `slot` (microseconds, as
   * text), holding it; the claim's try is not counted and nothing is recorded as a failure. Fenced like any finish.
   */
  async postponed(claim: { id: string; token: string }, slot: string): Promise<boolean> {
    const rows = await this.dataSource.query<[unknown[], number] | unknown[]>(
      `UPDATE webhook_deliveries SET next_attempt_at = $3::timestamptz, send_slot_at = $3::timestamptz,
         attempts = GREATEST(attempts - 1, 0), updated_at = clock_timestamp(), ${DROP_LEASE}
       WHERE id = $1::uuid AND ${fenced('$2')} RETURNING id`,
      [claim.id, claim.token, slot],
    );
    this.queue.released();
    return firstRow(rows) !== null;
  }

  /** Per endpoint with pending deliveries: seconds since its oldest undelivered event occurred. */
  async oldestUndelivered(): Promise<{ endpoint_id: string; age: number }[]> {
    return this.dataSource.query(
      `SELECT d.endpoint_id, EXTRACT(EPOCH FROM clock_timestamp() - min(ev.occurred_at))::float8 AS age
       FROM webhook_deliveries d JOIN outbox_events ev ON ev.id = d.event_id
       WHERE d.status = 'pending' GROUP BY d.endpoint_id`,
    );
  }
}
