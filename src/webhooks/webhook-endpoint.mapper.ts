import type { DeliveryRow } from './webhook-delivery-log.repository';
import type { EndpointRow } from './webhook-endpoint.repository';

/** An endpoint as its owner sees it: never its secret (shown once, at creation and at each rotation). */
export interface EndpointView {
  id: string;
  url: string;
  description: string | null;
  /** Empty: every event type of the client. */
  event_types: string[];
  /** Catalog events of these events only (u64 decimal strings); empty: of the catalog types in event_types. */
  event_ids: string[];
  /** Operator events (sync.*) reach this endpoint (created with an admin key). */
  operator_events: boolean;
  enabled: boolean;
  /** Messages per second at most (null: none). */
  rate_limit: number | null;
  /** Why it is disabled (by its owner, or after failing for WEBHOOKS_DISABLE_AFTER_HOURS). */
  disabled_reason: string | null;
  disabled_at: string | null;
  /** Start of the current run of failed tries (null after a success). */
  failing_since: string | null;
  /** Until then the rotated-out secret signs alongside the current one. */
  previous_secret_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

export interface DeliveryView {
  id: string;
  event_id: string;
  event_type: string;
  status: string;
  attempts: number;
  next_attempt_at: string | null;
  last_attempt_at: string | null;
  last_status_code: number | null;
  /** A bounded excerpt: the receiver's answer, the network error, or the SSRF guard's refusal. */
  last_error: string | null;
  last_duration_ms: number | null;
  delivered_at: string | null;
  created_at: string;
}

const iso = (d: Date | null): string | null => (d ? d.toISOString() : null);

export function toEndpointView(row: EndpointRow): EndpointView {
  const previousLive = row.previous_secret_until !== null && row.previous_secret_until.getTime() > Date.now();
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    event_types: row.event_types,
    event_ids: row.event_ids,
    operator_events: row.operator_events,
    enabled: row.enabled,
    rate_limit: row.rate_limit,
    disabled_reason: row.disabled_reason,
    disabled_at: iso(row.disabled_at),
    failing_since: iso(row.failing_since),
    previous_secret_expires_at: previousLive ? iso(row.previous_secret_until) : null,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export function toDeliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: row.id,
    event_id: row.event_id,
    event_type: row.event_type,
    status: row.status,
    attempts: row.attempts,
    next_attempt_at: iso(row.next_attempt_at),
    last_attempt_at: iso(row.last_attempt_at),
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    last_duration_ms: row.last_duration_ms,
    delivered_at: iso(row.delivered_at),
    created_at: row.created_at.toISOString(),
  };
}
