import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

/** A webhook endpoint row (table `webhook_endpoints`, owned by webhooks/); secrets stay sealed here. */
export interface EndpointRow {
  id: string;
  client_id: string;
  url: string;
  description: string | null;
  event_types: string[];
  /** u64 decimal strings (stored numeric[]). */
  event_ids: string[];
  operator_events: boolean;
  enabled: boolean;
  disabled_reason: string | null;
  disabled_at: Date | null;
  secret: Buffer;
  previous_secret: Buffer | null;
  previous_secret_until: Date | null;
  failing_since: Date | null;
  /** Messages per second at most (null: no limit but the in-flight cap). */
  rate_limit: number | null;
  created_at: Date;
  updated_at: Date;
  /** `created_at` exactly (microseconds), for keyset positions. */
  created_key: string;
}

export interface NewEndpoint {
  clientId: string;
  url: string;
  description: string | null;
  eventTypes: string[];
  /** Catalog events of these events only (u64 decimal strings; absent: none). */
  eventIds?: string[];
  operatorEvents: boolean;
  enabled: boolean;
  /** Messages per second at most (absent or null: none). */
  rateLimit?: number | null;
  secret: Buffer;
}

export interface EndpointPatch {
  url?: string;
  description?: string | null;
  eventTypes?: string[];
  eventIds?: string[];
  enabled?: boolean;
  /** null removes the limit. */
  rateLimit?: number | null;
}

const COLUMNS = `id, client_id, url, description, event_types, event_ids::text[] AS event_ids, operator_events, enabled, disabled_reason, disabled_at,
  secret, previous_secret, previous_secret_until, failing_since, rate_limit, created_at, updated_at, created_at::text AS created_key`;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Whether `id` can be a row id at all (a malformed one is the same 404 as an unknown one, never a SQL error). */
export function isUuid(id: string): boolean {
  return UUID.test(id);
}

/** Endpoints, always read and written under their owner's client id (another client's endpoint is not there). */
@Injectable()
export class WebhookEndpointRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Inserts unless the client has `max` endpoints already (then null). */
  async create(input: NewEndpoint, max: number): Promise<EndpointRow | null> {
    const rows = await this.dataSource.query<EndpointRow[]>(
      `INSERT INTO webhook_endpoints (client_id, url, description, event_types, operator_events, enabled, secret, rate_limit,
         event_ids)
       SELECT $1::uuid, $2, $3, $4::text[], $5, $6, $7, $9::int, $10::numeric[]
       WHERE (SELECT count(*) FROM webhook_endpoints WHERE client_id = $1::uuid) < $8
       RETURNING ${COLUMNS}`,
      [
        input.clientId,
        input.url,
        input.description,
        input.eventTypes,
        input.operatorEvents,
        input.enabled,
        input.secret,
        max,
        input.rateLimit ?? null,
        input.eventIds ?? [],
      ],
    );
    return rows[0] ?? null;
  }

  async get(clientId: string, id: string): Promise<EndpointRow | null> {
    if (!isUuid(id)) return null;
    const rows = await this.dataSource.query<EndpointRow[]>(
      `SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = $1::uuid AND client_id = $2::uuid`,
      [id, clientId],
    );
    return rows[0] ?? null;
  }

  /** Newest first, `limit + 1` rows after the keyset position (created_at, id). */
  async page(clientId: string, limit: number, after: [string, string] | null): Promise<EndpointRow[]> {
    return this.dataSource.query<EndpointRow[]>(
      `SELECT ${COLUMNS} FROM webhook_endpoints
       WHERE client_id = $1::uuid AND ($2::timestamptz IS NULL OR (created_at, id) < ($2::timestamptz, $3::uuid))
       ORDER BY created_at DESC, id DESC LIMIT $4`,
      [clientId, after?.[0] ?? null, after?.[1] ?? null, limit + 1],
    );
  }

  /** Applies `patch`; enabling clears the disabled reason and the failure run. */
  async update(clientId: string, id: string, patch: EndpointPatch): Promise<EndpointRow | null> {
    if (!isUuid(id)) return null;
    const rows = await this.dataSource.query<[EndpointRow[], number] | EndpointRow[]>(
      `UPDATE webhook_endpoints SET
         url = COALESCE($3, url),
         description = CASE WHEN $4::boolean THEN $5 ELSE description END,
         event_types = COALESCE($6::text[], event_types),
         event_ids = COALESCE($10::numeric[], event_ids),
         enabled = COALESCE($7::boolean, enabled),
         rate_limit = CASE WHEN $8::boolean THEN $9::int ELSE rate_limit END,
         disabled_reason = CASE WHEN $7::boolean THEN NULL WHEN $7::boolean = false AND enabled THEN 'disabled by the client' ELSE disabled_reason END,
         disabled_at = CASE WHEN $7::boolean THEN NULL WHEN $7::boolean = false AND enabled THEN clock_timestamp() ELSE disabled_at END,
         failing_since = CASE WHEN $7::boolean AND NOT enabled THEN NULL ELSE failing_since END,
         updated_at = clock_timestamp()
       WHERE id = $1::uuid AND client_id = $2::uuid
       RETURNING ${COLUMNS}`,
      [
        id,
        clientId,
        patch.url ?? null,
        patch.description !== undefined,
        patch.description ?? null,
        patch.eventTypes ?? null,
        patch.enabled ?? null,
        patch.rateLimit !== undefined,
        patch.rateLimit ?? null,
        patch.eventIds ?? null,
      ],
    );
    return firstRow(rows);
  }

  async delete(clientId: string, id: string): Promise<boolean> {
    if (!isUuid(id)) return false;
    const rows = await this.dataSource.query<[unknown[], number] | unknown[]>(
      `DELETE FROM webhook_endpoints WHERE id = $1::uuid AND client_id = $2::uuid RETURNING id`,
      [id, clientId],
    );
    return firstRow(rows) !== null;
  }

  /** Disables every enabled endpoint of `clientIds` with `reason` (their keys were revoked); the ids disabled. */
  async disableClients(clientIds: string[], reason: string): Promise<{ id: string; client_id: string }[]> {
    const rows = await this.dataSource.query<
      [{ id: string; client_id: string }[], number] | { id: string; client_id: string }[]
    >(
      `UPDATE webhook_endpoints SET enabled = false, disabled_at = clock_timestamp(), disabled_reason = $2,
         updated_at = clock_timestamp()
       WHERE client_id = ANY ($1::uuid[]) AND enabled RETURNING id, client_id`,
      [clientIds, reason],
    );
    return Array.isArray(rows[0]) ? rows[0] : (rows as { id: string; client_id: string }[]);
  }

  /**
   * Counts one manual send (a ping, a manual retry) in the endpoint's one-minute window (database clock, so every
   * replica counts in the same window). Null when the endpoint is not the client's; else whether this send is within
   * `perMinute` and the seconds until the window ends.
   */
  async takeManualSend(
    clientId: string,
    id: string,
    perMinute: number,
  ): Promise<{ allowed: boolean; retryAfterSeconds: number } | null> {
    if (!isUuid(id)) return null;
    const rows = await this.dataSource.query<
      [{ sends: number; left_s: number }[], number] | { sends: number; left_s: number }[]
    >(
      `WITH w AS (
         SELECT id, manual_window_at IS NULL OR manual_window_at <= clock_timestamp() - interval '1 minute' AS fresh
         FROM webhook_endpoints WHERE id = $1::uuid AND client_id = $2::uuid FOR UPDATE)
       UPDATE webhook_endpoints e SET
         manual_window_at = CASE WHEN w.fresh THEN clock_timestamp() ELSE e.manual_window_at END,
         manual_sends = CASE WHEN w.fresh THEN 1 ELSE LEAST(e.manual_sends + 1, 1000000) END
       FROM w WHERE e.id = w.id
       RETURNING e.manual_sends AS sends,
         EXTRACT(EPOCH FROM e.manual_window_at + interval '1 minute' - clock_timestamp())::float8 AS left_s`,
      [id, clientId],
    );
    const row = firstRow(rows);
    if (!row) return null;
    return { allowed: row.sends <= perMinute, retryAfterSeconds: Math.max(1, Math.ceil(row.left_s)) };
  }

  /**
   * Reserves the endpoint's next send slot (rate_limit per second, database clock, so every replica shares the
   * pace): the slot is the later of now and the previous reservation's end; the row moves on by 1/rate_limit.
   * Null when the endpoint has no rate_limit (or is gone); else the slot (microseconds, as text) and whether it is
   * later than now (then the delivery is given back due at the slot, which it then holds; else it is sent now).
   */
  async reserveSendSlot(id: string): Promise<{ slot: string; later: boolean } | null> {
    const rows = await this.dataSource.query<
      [{ slot: string; later: boolean }[], number] | { slot: string; later: boolean }[]
    >(
      `UPDATE webhook_endpoints
       SET next_send_at = GREATEST(COALESCE(next_send_at, clock_timestamp()), clock_timestamp())
         + make_interval(secs => 1.0 / rate_limit)
       WHERE id = $1::uuid AND rate_limit IS NOT NULL
       RETURNING (next_send_at - make_interval(secs => 1.0 / rate_limit))::text AS slot,
         next_send_at - make_interval(secs => 1.0 / rate_limit) > clock_timestamp() AS later`,
      [id],
    );
    return firstRow(rows);
  }

  /** The new secret signs from now; the current one keeps signing until `graceMs` from now (none when 0). */
  async rotate(clientId: string, id: string, secret: Buffer, graceMs: number): Promise<EndpointRow | null> {
    if (!isUuid(id)) return null;
    const rows = await this.dataSource.query<[EndpointRow[], number] | EndpointRow[]>(
      `UPDATE webhook_endpoints SET
         previous_secret = CASE WHEN $4::int > 0 THEN secret END,
         previous_secret_until = CASE WHEN $4::int > 0 THEN clock_timestamp() + make_interval(secs => $4::int / 1000.0) END,
         secret = $3, updated_at = clock_timestamp()
       WHERE id = $1::uuid AND client_id = $2::uuid
       RETURNING ${COLUMNS}`,
      [id, clientId, secret, graceMs],
    );
    return firstRow(rows);
  }
}

/** UPDATE … RETURNING comes back as [rows, count] from the pg driver through TypeORM. */
export function firstRow<T>(result: [T[], number] | T[]): T | null {
  const rows = Array.isArray(result[0]) ? result[0] : (result as T[]);
  return rows[0] ?? null;
}
