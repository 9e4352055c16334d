import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DatabaseClock } from '../database/database-clock';
import { MINUTE_MS, orderFigures, type MinuteFigures } from './status.aggregation';

export interface PassRow {
  id: string;
  resource: 'events' | 'listings';
  status: string;
  trigger: string;
  startedAt: number;
  finishedAt: number | null;
  items: number;
  error: string | null;
}

export interface OpenOrder {
  id: string;
  state: string;
  createdAt: number;
  attempt: number;
}

/** How many orders of a minute became final in `state` at attempt `attempt`. */
export interface FinalCount {
  state: string;
  attempt: number;
  count: number;
}

export interface EndpointBacklog {
  endpointId: string;
  undelivered: number;
  /** Undelivered deliveries whose last send failed (retrying). */
  retrying: number;
  oldestUndeliveredAt: number | null;
  /** Deliveries given up on (turned `failed`, which sets updated_at) in the last 24 h. */
  failed: number;
}

/** The webhook backlog: totals over every endpoint, and the first MAX_ENDPOINTS endpoints by oldest undelivered. */
export interface WebhookBacklog {
  undelivered: number;
  failed: number;
  endpoints: EndpointBacklog[];
}

export interface ReplicaSeen {
  instanceId: string;
  version: string;
  startedAt: number;
  seenAt: number;
  stopped: boolean;
}

/** Bound of the times to final read for one minute (the percentiles of a busier minute are of its first 20,000). */
const MAX_FINALS_PER_MINUTE = 20_000;
/** Bound of a minute's (outcome, attempt) counts: ten states times the attempt numbers a retry budget allows. */
const MAX_FINAL_COUNTS = 1_000;
/** Endpoints listed in the webhook backlog (the totals count every endpoint). */
const MAX_ENDPOINTS = 100;
/** Bound of the passes drawn over 24 h (a pass a minute per resource is 2,880). */
const MAX_PASSES = 3_000;

const ms = (column: string): string => `(extract(epoch FROM ${column}) * 1000)::float8`;

/**
 * Read-only figures of the status page from the tables other modules own (sync_passes, orders,
 * webhook_deliveries, service_replicas). Each statement reads an index range (the sync-pass, due, final, pending
 * and failed-delivery indexes) and returns a bounded number of rows (a LIMIT, or a count per state or per
 * endpoint); none writes, locks or claims. Reading them here, in one reporting repository,
 * keeps five modules' services free of page-shaped methods (docs/status.md "Where the figures come from").
 */
@Injectable()
export class StatusFiguresRepository {
  constructor(
    private readonly dataSource: DataSource,
    private readonly clock: DatabaseClock,
  ) {}

  /** The database clock (epoch ms; `DatabaseClock`, no round trip): the page's "now", as every stamp it compares with. */
  now(): Promise<number> {
    return Promise.resolve(this.clock.nowMs());
  }

  /** The latest pass of each full resource, whatever its outcome. */
  async lastPasses(): Promise<PassRow[]> {
    return this.passes(
      `SELECT p.* FROM unnest(ARRAY['events', 'listings']) AS r(resource),
         LATERAL (SELECT * FROM sync_passes s WHERE s.resource = r.resource ORDER BY id DESC LIMIT 1) p`,
      [],
    );
  }

  /** The latest completed pass of each full resource. */
  async lastCompletedPasses(): Promise<PassRow[]> {
    return this.passes(
      `SELECT p.* FROM unnest(ARRAY['events', 'listings']) AS r(resource),
         LATERAL (SELECT * FROM sync_passes s WHERE s.resource = r.resource AND s.status = 'completed'
                  ORDER BY finished_at DESC, id DESC LIMIT 1) p`,
      [],
    );
  }

  /** Full passes that finished from `from` (epoch ms) on, oldest first. */
  async passesSince(from: number): Promise<PassRow[]> {
    return this.passes(
      `SELECT * FROM (
         SELECT * FROM sync_passes WHERE resource IN ('events', 'listings')
           AND status IN ('completed', 'failed', 'cancelled') AND finished_at >= to_timestamp($1 / 1000.0)
         ORDER BY finished_at DESC LIMIT ${MAX_PASSES}) p ORDER BY finished_at`,
      [from],
    );
  }

  private async passes(sql: string, params: unknown[]): Promise<PassRow[]> {
    const rows = await this.dataSource.query<
      {
        id: string;
        resource: 'events' | 'listings';
        status: string;
        trigger: string;
        started_at: number;
        finished_at: number | null;
        items: string;
        error: string | null;
      }[]
    >(
      `SELECT id::text, resource, status, trigger, ${ms('started_at')} AS started_at,
         ${ms('finished_at')} AS finished_at, items::text, error FROM (${sql}) q`,
      params,
    );
    return rows.map((r) => ({
      id: r.id,
      resource: r.resource,
      status: r.status,
      trigger: r.trigger,
      startedAt: r.started_at,
      finishedAt: r.finished_at,
      items: Number(r.items),
      error: r.error,
    }));
  }

  /** Orders still in the service's hands (not done) by state, through the partial due index. */
  async openByState(): Promise<Record<string, number>> {
    const rows = await this.dataSource.query<{ state: string; n: number }[]>(
      `SELECT state, count(*)::int AS n FROM orders WHERE recovery_point <> 'done' GROUP BY state`,
    );
    return Object.fromEntries(rows.map((r) => [r.state, r.n]));
  }

  /** The oldest order not final yet. */
  async oldestOpen(): Promise<OpenOrder | null> {
    const [row] = await this.dataSource.query<
      { id: string; state: string; created_at: number; attempt: number }[]
    >(
      `SELECT id::text, state, ${ms('created_at')} AS created_at, attempt FROM orders
       WHERE recovery_point <> 'done' AND final_at IS NULL ORDER BY created_at, id LIMIT 1`,
    );
    return row ? { id: row.id, state: row.state, createdAt: row.created_at, attempt: row.attempt } : null;
  }

  /**
   * Orders that became final in [from, to) (epoch ms) counted by outcome and attempt number: every one of them
   * (the final index's range), unlike the percentiles' sample.
   */
  async finalCounts(from: number, to: number): Promise<FinalCount[]> {
    const rows = await this.dataSource.query<{ state: string; attempt: number; n: number }[]>(
      `SELECT state, attempt, count(*)::int AS n FROM orders
       WHERE final_at >= to_timestamp($1 / 1000.0) AND final_at < to_timestamp($2 / 1000.0)
       GROUP BY state, attempt ORDER BY state, attempt LIMIT ${MAX_FINAL_COUNTS}`,
      [from, to],
    );
    return rows.map((r) => ({ state: r.state, attempt: r.attempt, count: r.n }));
  }

  /**
   * Times to final (created_at → final_at, ms) of the orders final in [from, to), the first MAX_FINALS_PER_MINUTE
   * by final_at (the final index's order): the sample the percentiles are taken from.
   */
  async finalDurations(from: number, to: number): Promise<number[]> {
    const rows = await this.dataSource.query<{ duration_ms: number }[]>(
      `SELECT ${ms('final_at')} - ${ms('created_at')} AS duration_ms FROM orders
       WHERE final_at >= to_timestamp($1 / 1000.0) AND final_at < to_timestamp($2 / 1000.0)
       ORDER BY final_at, id LIMIT ${MAX_FINALS_PER_MINUTE}`,
      [from, to],
    );
    return rows.map((r) => Math.max(0, r.duration_ms));
  }

  /**
   * Webhook backlog per endpoint (undelivered through the pending index, retrying, oldest; given up in 24 h
   * through the failed index), the first MAX_ENDPOINTS by oldest undelivered, and the totals of every endpoint
   * (window sums, taken before the LIMIT).
   */
  async webhookBacklog(): Promise<WebhookBacklog> {
    const rows = await this.dataSource.query<
      {
        endpoint_id: string;
        undelivered: number;
        retrying: number;
        oldest: number | null;
        failed: number;
        total_undelivered: number;
        total_failed: number;
      }[]
    >(
      `SELECT endpoint_id::text, undelivered::int, retrying::int, oldest, failed::int,
         (sum(undelivered) OVER ())::int AS total_undelivered, (sum(failed) OVER ())::int AS total_failed
       FROM (
         SELECT endpoint_id, sum(undelivered) AS undelivered, sum(retrying) AS retrying, min(oldest) AS oldest,
           sum(failed) AS failed
         FROM (
           SELECT endpoint_id, count(*) AS undelivered, count(*) FILTER (WHERE attempts > 0) AS retrying,
             ${ms('min(created_at)')} AS oldest, 0 AS failed
           FROM webhook_deliveries WHERE status = 'pending' GROUP BY endpoint_id
           UNION ALL
           SELECT endpoint_id, 0, 0, NULL, count(*)
           FROM webhook_deliveries WHERE status = 'failed' AND updated_at > now() - interval '24 hours'
           GROUP BY endpoint_id
         ) q GROUP BY endpoint_id
       ) e ORDER BY oldest NULLS LAST, endpoint_id LIMIT ${MAX_ENDPOINTS}`,
    );
    return {
      undelivered: rows[0]?.total_undelivered ?? 0,
      failed: rows[0]?.total_failed ?? 0,
      endpoints: rows.map((r) => ({
        endpointId: r.endpoint_id,
        undelivered: r.undelivered,
        retrying: r.retrying,
        oldestUndeliveredAt: r.oldest,
        failed: r.failed,
      })),
    };
  }

  /** Replicas seen in the last `withinMs` (stopped ones included, marked). */
  async replicasSeen(withinMs: number): Promise<ReplicaSeen[]> {
    const rows = await this.dataSource.query<
      { instance_id: string; version: string; started_at: number; seen_at: number; stopped: boolean }[]
    >(
      `SELECT instance_id, version, ${ms('started_at')} AS started_at, ${ms('seen_at')} AS seen_at,
         stopped_at IS NOT NULL AS stopped
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

/**
 * One minute's order figures, read from `orders` (counts uncapped, the durations' sample) — what the recorder
 * stores for a settled minute and what the report computes live for the minutes not stored yet.
 */
export async function minuteOrderFigures(
  figures: Pick<StatusFiguresRepository, 'finalCounts' | 'finalDurations'>,
  minute: number,
): Promise<MinuteFigures> {
  const counts = await figures.finalCounts(minute, minute + MINUTE_MS);
  const durations = await figures.finalDurations(minute, minute + MINUTE_MS);
  return orderFigures(minute, counts, durations);
}
