/**
 * The events catalogue (docs/webhooks.md): every type a webhook or the feed can carry, the version of its `data`
 * shape, and the shape itself. A change that removes or renames a field of `data` is a new version; adding a
 * field is not. Names are `<resource>.<what happened>`; an event is announced in the transaction that made it
 * true, by the outbox triggers of the owning tables (see WebhooksModule; the `data` shapes are built in SQL by the
 * trigger functions of migrations/…-CreateOutboxTriggers.ts and …-CreateEndpointDisabledTrigger.ts).
 */

/** Money and u64 values travel as exact decimal strings; ids as strings; times as ISO-8601 (database clock). */
type Decimal = string;

/** Final states of an order (each has its own event type, so a receiver can subscribe to confirmations only). */
export type OrderFinalState = 'confirmed' | 'landed_with_error' | 'rejected' | 'failed';

export interface OrderCreatedData {
  order_id: string;
  state: 'created';
  buyer_subject: string;
  event_id: Decimal;
  ticket_id: Decimal;
  expected_price_minor: Decimal;
}

export interface OrderStateChangedData {
  order_id: string;
  state: string;
  previous_state: string | null;
  attempt: number;
}

export interface OrderFinalData {
  order_id: string;
  state: OrderFinalState;
  attempt: number;
  event_id: Decimal;
  ticket_id: Decimal;
  /** The price paid (confirmed) or last seen, in minor units. */
  price_minor: Decimal;
  /** Null when confirmed. */
  failure: { code: string; reason: string } | null;
  transaction_signature: string | null;
}

export interface TransactionFinalData {
  /** The caller's Idempotency-Key of `POST /v1/transactions` (its handle for `GET`). */
  idempotency_key: string;
  custodial_transaction_id: string | null;
  kind: string;
  instruction: string;
  /** confirmed, landed_with_error, expired, or why tracking stopped (rejected, gave_up). */
  status: string;
  failure_reason: string | null;
  signature: string | null;
}

export interface ListingTransactionFinalData {
  idempotency_key: string;
  action: 'list' | 'cancel';
  event_id: Decimal;
  ticket_id: Decimal;
  status: string;
  failure_reason: string | null;
  signature: string | null;
}

export interface SyncPassCompletedData {
  pass_id: string;
  resource: string;
  /** `all`, or the one event a refresh pass covered. */
  scope: string;
  items: number;
  upserted: number;
  removed: number;
}

export interface SyncPassFailedData {
  pass_id: string;
  resource: string;
  scope: string;
  /** A short, sanitised reason (never a secret, never a full upstream body). */
  error: string;
}

/**
 * An endpoint of the client was disabled (migrations/…-CreateEndpointDisabledTrigger.ts): `reason` `automatic`
 * (every delivery failed for WEBHOOKS_DISABLE_AFTER_HOURS), `key_revoked` or `manual` (PATCH enabled=false);
 * `detail` is its `disabled_reason`; `url` is the origin only (no path or query: they may carry a token).
 */
export interface EndpointDisabledData {
  endpoint_id: string;
  url: string;
  reason: 'automatic' | 'key_revoked' | 'manual';
  detail: string | null;
  disabled_at: string;
}

export interface PingData {
  endpoint_id: string;
}

/** Every event type, with its `data` shape. */
export interface EventDataByType {
  'order.created': OrderCreatedData;
  'order.state_changed': OrderStateChangedData;
  'order.confirmed': OrderFinalData;
  'order.landed_with_error': OrderFinalData;
  'order.rejected': OrderFinalData;
  'order.failed': OrderFinalData;
  'transaction.final': TransactionFinalData;
  'listing.transaction_final': ListingTransactionFinalData;
  'sync.pass_completed': SyncPassCompletedData;
  'sync.pass_failed': SyncPassFailedData;
  'webhook.ping': PingData;
  'endpoint.disabled': EndpointDisabledData;
}

export type EventType = keyof EventDataByType;

/** The current version of each type's `data` shape. */
export const EVENT_VERSIONS: Readonly<Record<EventType, number>> = {
  'order.created': 1,
  'order.state_changed': 1,
  'order.confirmed': 1,
  'order.landed_with_error': 1,
  'order.rejected': 1,
  'order.failed': 1,
  'transaction.final': 1,
  'listing.transaction_final': 1,
  'sync.pass_completed': 1,
  'sync.pass_failed': 1,
  'webhook.ping': 1,
  'endpoint.disabled': 1,
};

export const EVENT_TYPES = Object.keys(EVENT_VERSIONS) as EventType[];

/** Operator events: no owning client (`clientId: null`); they reach admin clients' endpoints and feeds only. */
export const OPERATOR_EVENT_TYPES: readonly EventType[] = ['sync.pass_completed', 'sync.pass_failed'];

/** Types an endpoint may filter on (a ping always reaches the endpoint it was sent to). */
export const SUBSCRIBABLE_EVENT_TYPES: readonly EventType[] = EVENT_TYPES.filter((t) => t !== 'webhook.ping');

export function isEventType(value: string): value is EventType {
  return Object.hasOwn(EVENT_VERSIONS, value);
}

/**
 * One event as the triggers announce it (tests append such events through `outbox_append` directly:
 * test/support/outbox-events.ts): its type, its owner (the API client whose order / listing / transaction it is; null for
 * an operator event) and its data. Values of type bigint are written as decimal strings.
 */
export type NewEvent = {
  [T in EventType]: {
    type: T;
    clientId: T extends 'sync.pass_completed' | 'sync.pass_failed' ? null : string;
    data: EventDataByType[T];
  };
}[EventType];

/** An event as a webhook body and a feed item carry it (the same JSON in both). */
export interface EventEnvelope {
  /** `evt_…`: the `webhook-id` header, stable across retries; receivers dedupe by it. */
  id: string;
  type: EventType;
  /** Version of the `data` shape of this type. */
  version: number;
  /** The database clock (`clock_timestamp()`) at the append, inside the transaction that made the change. */
  occurred_at: string;
  data: Record<string, unknown>;
}
