import type { Client } from 'pg';
import { withClient } from './database';
import type { OrdersClient } from './orders-client';
import { sleep } from './processes';
import { auditCatalog, type CatalogAuditFigures } from './catalog-audit';
import {
  auditWebhooks,
  isAnnounced,
  type FeedEvent,
  type OrderTruth,
  type WebhookAuditFigures,
} from './webhook-audit';
import { ChaosWebhookReceiver, type ReceiverTally } from './webhook-receiver';

/** The webhook figures of the report: the audit's, the receiver's tally and how the deliveries drained. */
export interface WebhookFigures extends WebhookAuditFigures, CatalogAuditFigures, ReceiverTally {
  /** From all orders final (or the end of the wait for it) until no delivery of the endpoint was pending. */
  drainMs: number | null;
  /** Deliveries still pending when the drain wait ended (each with its next try), and those given up. */
  pendingAtEnd: number;
  nextPendingTryAt: string | null;
  failedDeliveries: number;
}

/** Share of events whose first try is answered 500 (retried after 5 s), and answered after SLOW_MS. */
const FAIL_SHARE = 0.03;
const SLOW_SHARE = 0.03;
const SLOW_MS = 1_000;
/** Feed pages are read with this limit (the largest the API takes). */
const FEED_PAGE = 500;

interface FeedPage {
  items: { id: string; type: string }[];
  next_cursor: string | null;
  has_more: boolean;
}

/**
 * Issue 24's check in the chaos run: a receiver registered as the run's webhook endpoint before the orders start
 * (verifying every signature, now and then failing a first try or answering slowly), and at the end — after a
 * bounded wait until no delivery is pending — an audit of what it got against the database (final states and
 * audit trails) and against the feed read from its start (docs/chaos.md "Webhooks").
 */
export class WebhookCheck {
  private constructor(
    readonly receiver: ChaosWebhookReceiver,
    readonly endpointId: string,
    readonly eventIds: readonly string[],
  ) {}

  /**
   * Starts the receiver and registers it (`POST /v1/webhooks/endpoints`, every event type) through `serviceUrl`
   * with the run's key; `freshMs` must stay below the replicas' WEBHOOKS_LEASE_MS (see ReceiverOptions).
   * `eventIds` (at most 100, the endpoint filter's limit): the run's events, whose catalog events (`listing.*`) the
   * endpoint gets besides every order event.
   */
  static async start(options: {
    seed: string;
    serviceUrl: string;
    apiKey: string;
    freshMs: number;
    eventIds: readonly string[];
  }): Promise<WebhookCheck> {
    const receiver = await ChaosWebhookReceiver.start({
      seed: options.seed,
      failShare: FAIL_SHARE,
      slowShare: SLOW_SHARE,
      slowMs: SLOW_MS,
      freshMs: options.freshMs,
    });
    try {
      // Once, before any disruption: a retried registration could leave two endpoints (every event twice).
      const res = await fetch(`${options.serviceUrl}/v1/webhooks/endpoints`, {
        method: 'POST',
        headers: { authorization: `Bearer ${options.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          url: receiver.url,
          description: 'chaos run receiver',
          event_ids: options.eventIds,
        }),
        signal: AbortSignal.timeout(10_000),
      });
      const text = await res.text();
      if (res.status !== 201)
        throw new Error(`webhook endpoint not registered: ${res.status} ${text.slice(0, 300)}`);
      const endpoint = JSON.parse(text) as { id: string; secret: string };
      receiver.verifyWith(endpoint.secret);
      return new WebhookCheck(receiver, endpoint.id, options.eventIds);
    } catch (error) {
      await receiver.close();
      throw error;
    }
  }

  /** Waits (bounded) until no delivery is pending, then audits the receiver against the database and the feed. */
  async finish(options: {
    databaseUrl: string;
    client: OrdersClient;
    drainWithinMs: number;
    note: (line: string) => void;
  }): Promise<WebhookFigures> {
    const drainStarted = Date.now();
    let drainMs: number | null = null;
    let backlog = await this.backlog(options.databaseUrl);
    while (backlog.pending > 0 && Date.now() - drainStarted < options.drainWithinMs) {
      await sleep(500);
      backlog = await this.backlog(options.databaseUrl);
    }
    if (backlog.pending === 0) drainMs = Date.now() - drainStarted;
    const orders = await withClient(options.databaseUrl, (db) => ordersOf(db));
    const feed = await withClient(options.databaseUrl, async (db) =>
      positioned(db, await this.readFeed(options.client, options.drainWithinMs / 4)),
    );
    // A catalog event written after the drain (a late walk) is in the feed before its delivery ends: wait (bounded)
    // until the receiver acknowledged every announced event the feed served.
    await this.awaitAcknowledged(feed, options.drainWithinMs / 4);
    const catalog = await withClient(options.databaseUrl, async (db) =>
      auditCatalog(db, {
        clientId: await clientOf(db, this.endpointId),
        eventIds: this.eventIds,
        note: options.note,
      }),
    );
    // The diagnosis first: the notes are capped, and a stalled feed makes the audit note many ids.
    const inFeed = new Set(feed.map((e) => e.id));
    const absent = [...new Set(this.receiver.received.map((r) => r.id))].filter((id) => !inFeed.has(id));
    if (absent.length > 0)
      for (const line of await withClient(options.databaseUrl, (db) =>
        feedGapOf(db, absent, this.endpointId, feed.length, inFeed.size),
      ))
        options.note(line);
    const figures = auditWebhooks({
      orders,
      received: this.receiver.received,
      feed,
      badSignatures: this.receiver.tally.badSignatures,
      note: options.note,
    });
    return {
      ...figures,
      ...catalog,
      ...this.receiver.tally,
      drainMs,
      pendingAtEnd: backlog.pending,
      nextPendingTryAt: backlog.next,
      failedDeliveries: backlog.failed,
    };
  }

  private async awaitAcknowledged(feed: readonly FeedEvent[], withinMs: number): Promise<void> {
    const deadline = Date.now() + withinMs;
    const announced = feed.filter((e) => isAnnounced(e.type)).map((e) => e.id);
    while (Date.now() < deadline) {
      const acknowledged = new Set(this.receiver.received.filter((r) => r.acknowledged).map((r) => r.id));
      if (announced.every((id) => acknowledged.has(id))) return;
      await sleep(500);
    }
  }

  close(): Promise<void> {
    return this.receiver.close();
  }

  private backlog(databaseUrl: string): Promise<{ pending: number; failed: number; next: string | null }> {
    return withClient(databaseUrl, async (db) => {
      const { rows } = await db.query<{ pending: number; failed: number; next: string | null }>(
        `SELECT count(*) FILTER (WHERE status = 'pending')::int AS pending,
                count(*) FILTER (WHERE status = 'failed')::int AS failed,
                min(next_attempt_at) FILTER (WHERE status = 'pending')::text AS next
         FROM webhook_deliveries WHERE endpoint_id = $1`,
        [this.endpointId],
      );
      return rows[0] ?? { pending: 0, failed: 0, next: null };
    });
  }

  /**
   * The run key's feed from its start, every page. An event appears in the feed only once every older
   * transaction has ended, so reading goes on from the last cursor (bounded) until it holds every event id
   * the receiver got.
   */
  private async readFeed(client: OrdersClient, withinMs: number): Promise<FeedEvent[]> {
    const deadline = Date.now() + withinMs;
    const wanted = new Set(this.receiver.received.map((r) => r.id));
    const feed: FeedEvent[] = [];
    let cursor: string | null = null;
    for (let page = 0; page < 10_000; page++) {
      const path: string = `/v1/notifications?limit=${FEED_PAGE}${cursor ? `&after=${encodeURIComponent(cursor)}` : ''}`;
      const res = await client.getJson(path, page);
      if (res?.status !== 200) throw new Error(`feed read failed: ${res ? res.status : 'no answer'}`);
      const body = res.body as FeedPage;
      for (const item of body.items) {
        feed.push({ id: item.id, type: item.type });
        wanted.delete(item.id);
      }
      cursor = body.next_cursor ?? cursor;
      if (body.has_more) continue;
      if (wanted.size === 0 || Date.now() > deadline) break;
      await sleep(500);
    }
    return feed;
  }
}

/**
 * Where the feed's gap is, for the report: the key's events in the database against those the feed served, the
 * absent events' transaction ids and positions (the feed's order), `pg_snapshot_xmin` (the feed serves only rows
 * below it) and the backends holding a transaction open (a transaction left open holds the feed back).
 */
async function feedGapOf(
  db: Client,
  absent: string[],
  endpointId: string,
  served: number,
  distinct: number,
): Promise<string[]> {
  const { rows: totals } = await db.query<{ events: number; xmin: string }>(
    `SELECT count(*)::int AS events, pg_snapshot_xmin(pg_current_snapshot())::text AS xmin
     FROM outbox_events o, webhook_endpoints w
     WHERE w.id = $1::uuid AND (o.client_id = w.client_id OR o.client_id IS NULL)`,
    [endpointId],
  );
  const { rows: sample } = await db.query<{ id: string; type: string; xact_id: string; position: string }>(
    `SELECT id, type, xact_id::text AS xact_id, position::text AS position
     FROM outbox_events WHERE id = ANY ($1::text[]) ORDER BY outbox_events.xact_id, outbox_events.position`,
    [absent],
  );
  const { rows: open } = await db.query<Record<string, unknown>>(
    `SELECT pid, application_name, state, xact_start, backend_xid::text AS xid, left(query, 200) AS query
     FROM pg_stat_activity
     WHERE backend_xid IS NOT NULL AND pid <> pg_backend_pid()
     ORDER BY xact_start LIMIT 5`,
  );
  const first = sample.slice(0, 3).map((r) => JSON.stringify(r));
  const last = sample.at(-1);
  return [
    `feed gap: the key's events in the database ${totals[0]?.events}, served by the feed ${served} (${distinct} distinct); ` +
      `${absent.length} received ids absent (${sample.length} of them in outbox_events), ` +
      `transaction ids ${sample[0]?.xact_id ?? '-'}..${last?.xact_id ?? '-'}; ` +
      `pg_snapshot_xmin ${totals[0]?.xmin}; transactions open: ${open.length === 0 ? 'none' : JSON.stringify(open)}`,
    `feed gap: first absent ${first.join(', ')}`,
  ];
}

/** The feed's items with their positions in the database (the envelope does not carry them). */
async function positioned(db: Client, feed: FeedEvent[]): Promise<FeedEvent[]> {
  const { rows } = await db.query<{ id: string; xact_id: string; position: string }>(
    `SELECT id, xact_id::text AS xact_id, position::text AS position FROM outbox_events WHERE id = ANY ($1::text[])`,
    [feed.map((e) => e.id)],
  );
  const at = new Map(rows.map((r) => [r.id, { xactId: r.xact_id, position: r.position }]));
  return feed.map((e) => ({ ...e, at: at.get(e.id) ?? null }));
}

/** Every order with its final state and the states its audit trail reached. */
async function ordersOf(db: Client): Promise<OrderTruth[]> {
  const { rows } = await db.query<{
    id: string;
    state: string;
    failure_code: string | null;
    reached: string[] | null;
    reopened: boolean | null;
  }>(
    `SELECT o.id, o.state, o.failure_code, s.reached, s.reopened
     FROM orders o
     LEFT JOIN (SELECT order_id, array_agg(DISTINCT state) AS reached, bool_or(step = 'reopened') AS reopened
                FROM order_steps GROUP BY order_id) s ON s.order_id = o.id`,
  );
  return rows.map((r) => ({
    id: r.id,
    state: r.state,
    failureCode: r.failure_code,
    reached: [...(r.reached ?? []), r.state],
    reopened: r.reopened === true,
  }));
}

/** The API client the run's endpoint belongs to (the run's key). */
async function clientOf(db: Client, endpointId: string): Promise<string> {
  const { rows } = await db.query<{ client_id: string }>(
    `SELECT client_id::text AS client_id FROM webhook_endpoints WHERE id = $1::uuid`,
    [endpointId],
  );
  if (!rows[0]) throw new Error(`webhook endpoint ${endpointId} not found`);
  return rows[0].client_id;
}
