/** One request the run's receiver verified (signature good): the envelope's id, type and data. */
export interface ReceivedEvent {
  /** `webhook-id` (= the envelope's id). */
  id: string;
  type: string;
  data: Record<string, unknown>;
  /** Answered 2xx (an injected 500 is not: the service must send it again). */
  acknowledged: boolean;
}

/** An order as the database has it at the end: its state and every state its audit trail names. */
export interface OrderTruth {
  id: string;
  state: string;
  failureCode: string | null;
  /** The states of its `order_steps` rows (every state a commit reached), and its current one. */
  reached: readonly string[];
  /** It has a `reopened` step: closed once, then reopened by the reconciler (two final events are legitimate). */
  reopened: boolean;
}

/** An item of GET /v1/notifications. */
export interface FeedEvent {
  id: string;
  type: string;
  /** Its feed position in the database (writing transaction's id, insertion order), when known. */
  at?: { xactId: string; position: string } | null;
}

/** The webhook figures of a chaos run (docs/chaos.md "Webhooks"); the breaches are those that must be 0. */
export interface WebhookAuditFigures {
  finalOrders: number;
  /** Final orders with an acknowledged `order.<state>` event naming that state and failure code. */
  announcedFinals: number;
  // Breaches: every one must be 0.
  missingFinals: number;
  wrongStateEvents: number;
  conflictingFinals: number;
  badSignatures: number;
  /** Received (verified) event ids the feed does not have. */
  receivedNotInFeed: number;
  /** Order events of the feed never acknowledged at the receiver. */
  feedNotReceived: number;
  /** Feed items not after every earlier one in (transaction id, position) order: out of order, or served again. */
  feedOutOfOrder: number;
  // Information.
  /** Verified requests answered 2xx. */
  deliveries: number;
  /** Distinct event ids answered 2xx. */
  events: number;
  /** 2xx deliveries beyond the first per `webhook-id` (at least once: allowed, counted). */
  duplicateDeliveries: number;
  /** Order events in the feed. */
  feedOrderEvents: number;
  /** Catalog events (`listing.*`) in the feed. */
  feedCatalogEvents: number;
}

/**
 * Whether every event of this type in the run key's feed must reach the receiver: order events (every one comes
 * after the endpoint was registered) and catalog events (written only for a subscribed client, so after it too).
 * `sync.*` events may be older than the endpoint.
 */
export function isAnnounced(type: string): boolean {
  return type.startsWith('order.') || type.startsWith('listing.');
}

/** Lines noted per breach class (the report's details are capped too). */
const NOTES_PER_CLASS = 5;

export const FINAL_ORDER_STATES: readonly string[] = ['confirmed', 'landed_with_error', 'rejected', 'failed'];

function failureCodeOf(data: Record<string, unknown>): string | null {
  const failure = data.failure as { code?: unknown } | null | undefined;
  return typeof failure?.code === 'string' ? failure.code : null;
}

/**
 * The webhook audit of a chaos run (docs/chaos.md "Webhooks"), from what the receiver verified, the database's
 * orders and audit trails, and the feed read from its start:
 * - missing finals: a final order without an acknowledged `order.<state>` event naming its id, state and failure
 *   code;
 * - wrong-state events: an order event naming a state (or `previous_state`) the order's audit trail never
 *   reached, a type that disagrees with its state (`order.X` whose state is not X, `order.state_changed` with a
 *   final state), an order the database does not have, or — for an order never reopened — a final event other
 *   than its final state and code (it reached exactly one);
 * - conflicting finals: an order never reopened with two different final events (distinct ids);
 * - bad signatures: requests the receiver refused;
 * - feed: a received event id the feed lacks, or an order or catalog event of the feed never acknowledged
 *   (webhooks and the feed carry one stream, and every such event is announced after the endpoint was registered).
 * Counted, not breaches: duplicates by `webhook-id` (at least once), and feed items not after every earlier one
 * in (transaction id, position) order, compared as numbers (out of order, or served again).
 */
export function auditWebhooks(input: {
  orders: readonly OrderTruth[];
  received: readonly ReceivedEvent[];
  feed: readonly FeedEvent[];
  badSignatures: number;
  note: (line: string) => void;
}): WebhookAuditFigures {
  // At most NOTES_PER_CLASS lines per class: one class with many cases must not hide the others.
  const noted = new Map<string, number>();
  const note = (kind: string, line: string): void => {
    const n = (noted.get(kind) ?? 0) + 1;
    noted.set(kind, n);
    if (n <= NOTES_PER_CLASS) input.note(line);
  };
  const f: WebhookAuditFigures = {
    finalOrders: 0,
    announcedFinals: 0,
    missingFinals: 0,
    wrongStateEvents: 0,
    conflictingFinals: 0,
    badSignatures: input.badSignatures,
    receivedNotInFeed: 0,
    feedNotReceived: 0,
    feedOutOfOrder: 0,
    deliveries: 0,
    events: 0,
    duplicateDeliveries: 0,
    feedOrderEvents: 0,
    feedCatalogEvents: 0,
  };
  const orders = new Map(input.orders.map((o) => [o.id, o]));
  // One entry per event id (the first copy: every copy of an id carries the same envelope).
  const events = new Map<string, ReceivedEvent>();
  const acknowledged = new Set<string>();
  for (const event of input.received) {
    if (!events.has(event.id)) events.set(event.id, event);
    if (!event.acknowledged) continue;
    f.deliveries++;
    if (acknowledged.has(event.id)) f.duplicateDeliveries++;
    acknowledged.add(event.id);
  }
  f.events = acknowledged.size;

  const finalsOf = new Map<string, ReceivedEvent[]>();
  for (const event of events.values()) {
    if (!event.type.startsWith('order.')) continue;
    const orderId = typeof event.data.order_id === 'string' ? event.data.order_id : '';
    const order = orders.get(orderId);
    const problem = order ? wrongState(event, order) : 'an order the database does not have';
    if (problem) {
      f.wrongStateEvents++;
      note(
        'wrong',
        `webhook ${event.id} ${event.type} (order ${orderId}, state ${String(event.data.state)}): ${problem}`,
      );
    }
    if (FINAL_ORDER_STATES.includes(event.type.slice('order.'.length)))
      finalsOf.set(orderId, [...(finalsOf.get(orderId) ?? []), event]);
  }

  for (const order of input.orders) {
    const finals = finalsOf.get(order.id) ?? [];
    if (finals.length > 1 && !order.reopened) {
      f.conflictingFinals++;
      note(
        'conflict',
        `order ${order.id}: ${finals.length} final events (${finals.map((e) => e.type).join(', ')}), never reopened`,
      );
    }
    if (!FINAL_ORDER_STATES.includes(order.state)) continue;
    f.finalOrders++;
    const announced = finals.some(
      (e) =>
        acknowledged.has(e.id) &&
        e.type === `order.${order.state}` &&
        e.data.state === order.state &&
        failureCodeOf(e.data) === order.failureCode,
    );
    if (announced) f.announcedFinals++;
    else {
      f.missingFinals++;
      note(
        'missing',
        `order ${order.id}: ${order.state}${order.failureCode ? `/${order.failureCode}` : ''}, no such event received ` +
          `(final events: ${finals.map((e) => `${e.id} ${e.type}/${failureCodeOf(e.data) ?? '-'}${acknowledged.has(e.id) ? '' : ' unacknowledged'}`).join(', ') || 'none'})`,
      );
    }
  }

  const inFeed = new Set(input.feed.map((e) => e.id));
  for (const id of events.keys()) {
    if (inFeed.has(id)) continue;
    f.receivedNotInFeed++;
    note('not in feed', `webhook ${id} (${events.get(id)?.type}): not in the feed`);
  }
  // The feed is served in (transaction id, position) order, compared as numbers: each item after every one
  // served before it (the highest so far).
  let highest: { xactId: bigint; position: bigint } | null = null;
  for (const event of input.feed) {
    if (!event.at) continue;
    const at = { xactId: BigInt(event.at.xactId), position: BigInt(event.at.position) };
    if (
      highest &&
      (at.xactId < highest.xactId || (at.xactId === highest.xactId && at.position <= highest.position))
    ) {
      f.feedOutOfOrder++;
      note(
        'out of order',
        `feed event ${event.id} at (${event.at.xactId}, ${event.at.position}) served after (${highest.xactId}, ${highest.position})`,
      );
    } else highest = at;
  }
  for (const event of input.feed) {
    if (!isAnnounced(event.type)) continue;
    if (event.type.startsWith('order.')) f.feedOrderEvents++;
    else f.feedCatalogEvents++;
    if (acknowledged.has(event.id)) continue;
    f.feedNotReceived++;
    note('not received', `feed event ${event.id} (${event.type}): never acknowledged at the receiver`);
  }
  return f;
}

/** Why `event` names something `order` never was, or null. */
function wrongState(event: ReceivedEvent, order: OrderTruth): string | null {
  const state = String(event.data.state);
  const kind = event.type.slice('order.'.length);
  if (!order.reached.includes(state))
    return `state ${state} never reached (trail: ${order.reached.join(' ')})`;
  if (kind === 'state_changed') {
    if (FINAL_ORDER_STATES.includes(state)) return 'a final state announced as state_changed';
    const previous = event.data.previous_state;
    if (typeof previous === 'string' && !order.reached.includes(previous))
      return `previous state ${previous} never reached`;
    return null;
  }
  if (kind === 'created') return state === 'created' ? null : 'created in another state';
  if (kind !== state) return `type ${event.type} with state ${state}`;
  const code = failureCodeOf(event.data);
  if (!order.reopened && (state !== order.state || code !== order.failureCode))
    return `ended ${order.state}/${order.failureCode ?? '-'}, never reopened, announced ${state}/${code ?? '-'}`;
  return null;
}

/** The webhook breaches with their counts (empty: none). */
export function webhookBreachesOf(f: WebhookAuditFigures): string[] {
  const checks: [string, number][] = [
    ['final orders without their webhook event', f.missingFinals],
    ['webhook events naming a state the order did not reach', f.wrongStateEvents],
    ['orders announced with two final states, never reopened', f.conflictingFinals],
    ['webhook requests with a bad signature', f.badSignatures],
    ['received webhook events missing from the feed', f.receivedNotInFeed],
    ['feed order and catalog events never received as webhooks', f.feedNotReceived],
    ['feed items out of order or served again', f.feedOutOfOrder],
  ];
  return checks.filter(([, n]) => n !== 0).map(([what, n]) => `${what}: ${n}`);
}
