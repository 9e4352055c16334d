/**
 * The sections of the status report shaped from what StatusService read (docs/status.md): pure functions, no
 * reads, so the service keeps only the order of the reads, the build cache and the live minutes of orders.
 */
import type { ServedAccuracyView } from '../catalog-sync/served-accuracy.sampler';
import { TIMED_OUT } from '../common/race-timeout';
import type { SyncConfig } from '../config/sync.config';
import type { KeyVerdict } from '../upstream/upstream.types';
import {
  accuracyPercent,
  classifySyncFailure,
  meanOrNull,
  MINUTE_MS,
  MIRROR_SAMPLED,
  MIRROR_STALE,
  MIRROR_STALENESS_COUNT,
  MIRROR_STALENESS_SUM,
  minuteSeries,
  perSecond,
  type MinuteSample,
} from './status.aggregation';
import type { PassRow, WebhookBacklog } from './status.figures';
import type { CatalogAccuracyReport, ReportSeries, StatusReport, SyncResourceReport } from './status.report';
import type { StoredSample } from './status-sample.repository';

export const iso = (ms: number): string => new Date(ms).toISOString();
export const seconds = (ms: number): number => Math.max(0, Math.round(ms / 100) / 10);

/** The last pass, last completed pass and next due pass of each resource, and the day's items per second. */
export function syncSection(
  now: number,
  passes: { last: PassRow[]; completed: PassRow[]; recent: PassRow[] },
  sync: SyncConfig,
): StatusReport['sync'] {
  const { last, completed, recent } = passes;
  const resources = (['events', 'listings'] as const).map((resource): SyncResourceReport => {
    const pass = last.find((p) => p.resource === resource) ?? null;
    const done = completed.find((p) => p.resource === resource) ?? null;
    const interval = resource === 'events' ? sync.SYNC_EVENTS_INTERVAL_MS : sync.SYNC_LISTINGS_INTERVAL_MS;
    const lastEnd = pass ? (pass.finishedAt ?? null) : null;
    return {
      resource,
      last_pass: pass && {
        id: pass.id,
        status: pass.status,
        trigger: pass.trigger,
        started_at: iso(pass.startedAt),
        finished_at: pass.finishedAt === null ? null : iso(pass.finishedAt),
        items: pass.items,
        items_per_second: itemsPerSecond(pass),
        failure_kind:
          pass.status === 'failed' || pass.status === 'cancelled'
            ? classifySyncFailure(pass.status, pass.error)
            : null,
        error: pass.error,
      },
      last_completed_at: done?.finishedAt ? iso(done.finishedAt) : null,
      mirror_age_seconds: done ? seconds(now - done.startedAt) : null,
      lag_seconds: done?.finishedAt ? seconds(now - done.finishedAt) : null,
      next_pass_due_at: !sync.SYNC_ENABLED
        ? null
        : pass?.status === 'running'
          ? null
          : iso(Math.max(now, (lastEnd ?? now) + interval)),
    };
  });
  const items_per_second = (['events', 'listings'] as const).map((resource) => ({
    label: resource,
    points: recent
      .filter((p) => p.resource === resource && p.finishedAt !== null)
      .map((p) => ({ at: iso(p.finishedAt as number), value: itemsPerSecond(p) })),
  }));
  return { enabled: sync.SYNC_ENABLED, resources, items_per_second };
}

/** Requests, errors and 429s per operation from the recorded samples, and the key check's verdict. */
export function upstreamSection(
  window: { now: number; from: number; current: number },
  stored: readonly StoredSample[],
  verdict: KeyVerdict | typeof TIMED_OUT,
  keyCheckTimeoutMs: number,
): StatusReport['upstream'] {
  const { now, from, current } = window;
  const operations = labels(stored, 'upstream.requests').sort();
  const sum = (figure: string, label?: string): number =>
    stored
      .filter((s) => s.figure === figure && (label === undefined || s.label === label))
      .reduce((a, s) => a + s.value, 0);
  const lastFull = stored
    .filter((s) => s.figure === 'upstream.requests' && s.minute === current - MINUTE_MS)
    .reduce((a, s) => a + s.value, 0);
  return {
    requests_per_minute: operations.map((op) =>
      series(op, pick(stored, 'upstream.requests', op), from, current, 0),
    ),
    errors_per_minute: [
      series('errors', pick(stored, 'upstream.errors'), from, current, 0),
      series('429s', pick(stored, 'upstream.throttled'), from, current, 0),
    ],
    by_operation: operations.map((operation) => ({
      operation,
      requests: sum('upstream.requests', operation),
      errors: sum('upstream.errors', operation),
      throttled: sum('upstream.throttled', operation),
    })),
    request_rate_per_second: Math.round(perSecond(lastFull, MINUTE_MS) * 100) / 100,
    key_check:
      verdict === TIMED_OUT
        ? {
            ok: false,
            environment: '',
            checked_at: iso(now),
            code: 'TIMEOUT',
            reason: `the key check did not answer within ${keyCheckTimeoutMs} ms (still running)`,
          }
        : {
            ok: verdict.ok,
            environment: verdict.environment,
            checked_at: iso(verdict.checkedAt),
            code: verdict.ok ? null : verdict.code,
            reason: verdict.ok ? null : verdict.reason,
          },
  };
}

/**
 * The served-accuracy panel: this replica's sampler (`mine`) and every replica's recorded per-minute counts
 * (`mirror.sampled`, `mirror.stale`, the staleness sums and counts).
 */
export function catalogAccuracySection(
  mine: ServedAccuracyView,
  stored: readonly StoredSample[],
  from: number,
  current: number,
): CatalogAccuracyReport {
  const perMinute = (figure: string, label?: string) =>
    minuteSeries(pick(stored, figure, label), from, current, { fill: 0 });
  const sampled = perMinute(MIRROR_SAMPLED);
  const stale = perMinute(MIRROR_STALE);
  const sampledWindow = total(sampled);
  const staleWindow = total(stale);
  const windowPercent = accuracyPercent(sampledWindow, staleWindow);
  const tiers = labels(stored, MIRROR_STALENESS_COUNT).sort();
  return {
    sampling: mine.sampling,
    sample_interval_ms: mine.intervalMs,
    accuracy_now: mine.accuracy,
    window_samples: mine.window,
    sampled_window: sampledWindow,
    stale_window: staleWindow,
    accuracy_window: windowPercent === null ? null : Math.round(windowPercent * 10) / 1000,
    accuracy_per_minute: [
      {
        label: 'buyable %',
        points: sampled.map((p, i) => ({
          at: iso(p.minute),
          value: accuracyPercent(p.value ?? 0, stale[i]?.value ?? 0),
        })),
      },
    ],
    samples_per_minute: [
      { label: 'sampled', points: sampled.map((p) => ({ at: iso(p.minute), value: p.value })) },
      { label: 'stale', points: stale.map((p) => ({ at: iso(p.minute), value: p.value })) },
    ],
    staleness_seconds: tiers.map((tier) => {
      const sums = perMinute(MIRROR_STALENESS_SUM, tier);
      const counts = perMinute(MIRROR_STALENESS_COUNT, tier);
      return {
        label: tier,
        points: counts.map((c, i) => ({
          at: iso(c.minute),
          value: meanOrNull(sums[i]?.value ?? 0, c.value ?? 0),
        })),
      };
    }),
  };
}

/** The undelivered and failed deliveries, in total and per listed endpoint. */
export function webhooksSection(now: number, backlog: WebhookBacklog): StatusReport['webhooks'] {
  return {
    // Totals of every endpoint, not of the listed ones.
    undelivered: backlog.undelivered,
    failed_24h: backlog.failed,
    endpoints: backlog.endpoints.map((e) => ({
      endpoint_id: e.endpointId,
      undelivered: e.undelivered,
      retrying: e.retrying,
      oldest_undelivered_age_seconds:
        e.oldestUndeliveredAt === null ? null : seconds(now - e.oldestUndeliveredAt),
      failed_24h: e.failed,
    })),
  };
}

function itemsPerSecond(pass: PassRow): number | null {
  if (pass.finishedAt === null) return null;
  return Math.round(perSecond(pass.items, pass.finishedAt - pass.startedAt) * 10) / 10;
}

function total(points: readonly { value: number | null }[]): number {
  return points.reduce((a, p) => a + (p.value ?? 0), 0);
}

export function labels(samples: readonly StoredSample[], figure: string): string[] {
  return [...new Set(samples.filter((s) => s.figure === figure).map((s) => s.label))];
}

export function pick(samples: readonly StoredSample[], figure: string, label?: string): MinuteSample[] {
  return samples.filter((s) => s.figure === figure && (label === undefined || s.label === label));
}

export function totals(samples: readonly StoredSample[], figure: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) if (s.figure === figure) out[s.label] = (out[s.label] ?? 0) + s.value;
  return out;
}

export function series(
  label: string,
  samples: MinuteSample[],
  from: number,
  to: number,
  fill: number | null,
): ReportSeries {
  return {
    label,
    points: minuteSeries(samples, from, to, { fill }).map((p) => ({ at: iso(p.minute), value: p.value })),
  };
}
