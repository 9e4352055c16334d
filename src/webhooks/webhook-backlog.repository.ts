import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';

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

/** Endpoints listed in the webhook backlog (the totals count every endpoint). */
const MAX_ENDPOINTS = 100;

const ms = (column: string): string => `(extract(epoch FROM ${column}) * 1000)::float8`;

/**
 * The delivery backlog of `webhook_deliveries` that the status page asks for through WebhooksService
 * (docs/status.md "Where the figures come from"): one read-only statement through the pending and failed-delivery
 * indexes, a bounded number of rows.
 */
@Injectable()
export class WebhookBacklogRepository {
  constructor(private readonly dataSource: DataSource) {}

  /**
   * Webhook backlog per endpoint (undelivered through the pending index, retrying, oldest; given up in 24 h
   * through the failed index), the first MAX_ENDPOINTS by oldest undelivered, and the totals of every endpoint
   * (window sums, taken before the LIMIT).
   */
  async backlog(): Promise<WebhookBacklog> {
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
}
