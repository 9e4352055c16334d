/**
 * The events catalogue (docs/webhooks.md): every type a webhook or the feed can carry, the version of its `data`
 * shape, and the shape itself. A change that removes or renames a field of `data` is a new version; adding a
 * field is not. Names are `<resource>.<what happened>`; an event is announced in the transaction that made it
 * true, by the outbox triggers of the owning tables (see WebhooksModule; the `data` shapes are built in SQL by the
 * trigger functions of migrations/…-CreateOutboxTriggers.ts and …-CreateEndpointDisabledTrigger.ts).
 *
 * One piece: the catalogue is a reference read whole (docs/webhooks.md mirrors it), one type and one data shape
 * per event; split by resource, a receiver's author would have to gather it again.
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

/** Money as orders show it: exact minor units, and the amount in stablecoin units (null: decimals not known yet). */
export interface CatalogMoney {
  minor: Decimal;
  amount: string | null;
  decimals: number | null;
}

/**
 * Catalog events (issue 32, migrations/…-CreateCatalogEvents.ts): written by statement triggers on the mirror's
 * tables, one per change and subscribed client (an endpoint's `event_ids`, or a catalog type named in its
 * `event_types`).
 */
export interface ListingListedData {
  event_id: Decimal;
  ticket_id: Decimal;
  price_minor: Decimal;
  price: CatalogMoney;
  /** The listing's expiry as received (i64 seconds, decimal string), or null. */
  expires_at: Decimal | null;
}

export interface ListingPriceChangedData {
  event_id: Decimal;
  ticket_id: Decimal;
  previous_price_minor: Decimal;
  price_minor: Decimal;
  previous_price: CatalogMoney;
  price: CatalogMoney;
}

/** `sold`: bought through this service; `cancelled`: cancelled through it; `gone_upstream`: vanished otherwise. */
export type ListingRemovalReason = 'sold' | 'cancelled' | 'gone_upstream';

export interface ListingRemovedData {
  event_id: Decimal;
  ticket_id: Decimal;
  reason: ListingRemovalReason;
  /** Its last price. */
  price_minor: Decimal;
  price: CatalogMoney;
}

export interface EventListedData {
  event_id: Decimal;
  name: string;
  /** As received (null when the upstream had none). */
  start_at: string | null;
}

export interface EventUpdatedData extends EventListedData {
  previous_name: string;
  previous_start_at: string | null;
}

export interface EventRemovedData {
  event_id: Decimal;
  name: string;
}

/**
 * A full pass into an empty mirror, or the first after the database's epoch changed (a restore, a failover, a
 * restart), announced once instead of per row: re-read the events you follow.
 */
export interface SyncBackfillCompletedData {
  pass_id: string;
  resource: 'events' | 'listings';
  reason: 'empty_mirror' | 'epoch_changed';
  items: number;
  upserted: number;
  removed: number;
}
// --- watches (issue 32 item 3, docs/watches.md) ---------------------------------------------------------------

/** An exact amount as the read API shows it (src/listings/listing.mapper.ts MoneyView). */
export interface WatchMoney {
  minor: Decimal;
  decimals?: number;
  amount?: string;
  currency_mint?: string | null;
  unformatted_reason?: string;
}

/**
 * A watch of the client matched a listing (migrations/…-CreateWatchMatchTriggers.ts): `listed_under_max` (a new or
 * re-listed listing at or under the watch's max price), `price_drop` (an active listing fell by at least the
 * watch's percentage), `dropped_under_max` (an active listing fell from above the max to at or under it).
 */
export interface WatchMatchedData {
  watch_id: string;
  subject: string | null;
  listing: { event_id: Decimal; ticket_id: Decimal; price: WatchMoney };
  /** The active listing's price before the change; null for a new or re-listed listing. */
  previous_price: WatchMoney | null;
  reason: 'listed_under_max' | 'price_drop' | 'dropped_under_max';
}

// --- end watches ---------------------------------------------------------------------------------------------

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
  'listing.listed': ListingListedData;
  'listing.price_changed': ListingPriceChangedData;
  'listing.removed': ListingRemovedData;
  'event.listed': EventListedData;
  'event.updated': EventUpdatedData;
  'event.removed': EventRemovedData;
  'sync.backfill_completed': SyncBackfillCompletedData;
  'watch.matched': WatchMatchedData; // watches (issue 32 item 3)
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
  'listing.listed': 1,
  'listing.price_changed': 1,
  'listing.removed': 1,
  'event.listed': 1,
  'event.updated': 1,
  'event.removed': 1,
  'sync.backfill_completed': 1,
  'watch.matched': 1, // watches (issue 32 item 3)
};

export const EVENT_TYPES = Object.keys(EVENT_VERSIONS) as EventType[];

/** Operator events: no owning client (`clientId: null`); they reach admin clients' endpoints and feeds only. */
export const OPERATOR_EVENT_TYPES: readonly EventType[] = ['sync.pass_completed', 'sync.pass_failed'];

/**
 * Catalog change types: only to clients subscribed to the event (an endpoint's `event_ids`, or the type named in
 * the `event_types` of an endpoint without `event_ids`); never to an endpoint by default.
 */
export const CATALOG_EVENT_TYPES: readonly EventType[] = [
  'listing.listed',
  'listing.price_changed',
  'listing.removed',
  'event.listed',
  'event.updated',
  'event.removed',
];

/** Event ids one endpoint may filter on at most (the column's CHECK says the same). */
export const MAX_EVENT_IDS = 100;

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
    clientId: T extends 'sync.pass_completed' | 'sync.pass_failed'
      ? null
      : T extends 'sync.backfill_completed'
        ? string | null
        : string;
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
