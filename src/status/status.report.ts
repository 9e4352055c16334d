import type { SyncFailureKind } from './status.aggregation';

/** One plotted line: a value per minute (null: no value that minute) or per pass. */
export interface ReportSeries {
  label: string;
  points: { at: string; value: number | null }[];
}

export interface SyncResourceReport {
  resource: 'events' | 'listings';
  last_pass: {
    id: string;
    status: string;
    trigger: string;
    started_at: string;
    finished_at: string | null;
    items: number;
    items_per_second: number | null;
    failure_kind: SyncFailureKind | null;
    error: string | null;
  } | null;
  last_completed_at: string | null;
  /** Seconds since the last completed pass started: the oldest the mirrored data can be. */
  mirror_age_seconds: number | null;
  /** Seconds since the last completed pass finished. */
  lag_seconds: number | null;
  /** The next scheduled pass is due (earliest; replicas add up to SYNC_JITTER_MS); null when sync is off. */
  next_pass_due_at: string | null;
}

/** The "Catalog accuracy" panel (docs/status.md, docs/catalog-sync.md "Served accuracy"). */
export interface CatalogAccuracyReport {
  /** This replica's sampler: on (MIRROR_ACCURACY_SAMPLE_INTERVAL_MS > 0) and its interval. */
  sampling: boolean;
  sample_interval_ms: number;
  /** This replica's gauge (`mirror_served_accuracy`): buyable share of its last `window_samples` samples, 0..1. */
  accuracy_now: number | null;
  window_samples: number;
  /** Every replica, over the plotted window: samples with a verdict, those not buyable, and the buyable share 0..1. */
  sampled_window: number;
  stale_window: number;
  accuracy_window: number | null;
  /** Buyable share of each minute's samples, in percent (null: no sample that minute). */
  accuracy_per_minute: ReportSeries[];
  /** Samples and stale samples per minute (every replica). */
  samples_per_minute: ReportSeries[];
  /** Mean age in seconds of the data the read path served, per minute and tier (empty when not observed). */
  staleness_seconds: ReportSeries[];
}

/** The whole status report: `GET /v1/admin/status` and the page are two views of it (docs/status.md). */
export interface StatusReport {
  generated_at: string;
  window: { from: string; to: string; minutes: number };
  sync: {
    enabled: boolean;
    resources: SyncResourceReport[];
    /** Items per second of each finished pass of the last 24 h, per resource. */
    items_per_second: ReportSeries[];
  };
  orders: {
    /** Orders not final yet (or final with a follow-up step left), by state, now. */
    open_by_state: Record<string, number>;
    /** Orders that became final in the last 24 h, by outcome. */
    final_24h: Record<string, number>;
    oldest_open: { id: string; state: string; age_seconds: number; attempt: number } | null;
    /** Orders final in the last 24 h by how many attempts they took. */
    attempts_24h: Record<string, number>;
    final_per_minute: ReportSeries[];
    time_to_final_ms: ReportSeries[];
  };
  upstream: {
    requests_per_minute: ReportSeries[];
    errors_per_minute: ReportSeries[];
    by_operation: { operation: string; requests: number; errors: number; throttled: number }[];
    /** Attempts per second over the last full minute, every replica. */
    request_rate_per_second: number;
    key_check: {
      ok: boolean;
      environment: string;
      checked_at: string;
      code: string | null;
      reason: string | null;
    };
  };
  catalog_accuracy: CatalogAccuracyReport;
  webhooks: {
    undelivered: number;
    failed_24h: number;
    endpoints: {
      endpoint_id: string;
      undelivered: number;
      retrying: number;
      oldest_undelivered_age_seconds: number | null;
      failed_24h: number;
    }[];
  };
  replicas: { instance_id: string; version: string; started_at: string; seen_at: string; live: boolean }[];
}
