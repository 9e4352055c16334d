import { Injectable } from '@nestjs/common';
import { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import { raceTimeout, TIMED_OUT } from '../common/race-timeout';
import { AppConfig } from '../config/app.config';
import { SyncConfig } from '../config/sync.config';
import { UpstreamClient } from '../upstream/upstream.client';
import type { KeyVerdict } from '../upstream/upstream.types';
import {
  accuracyPercent,
  meanOrNull,
  MINUTE_MS,
  MIRROR_SAMPLED,
  MIRROR_STALE,
  MIRROR_STALENESS_COUNT,
  MIRROR_STALENESS_SUM,
  ORDERS_RECORDED,
  classifySyncFailure,
  minuteOf,
  minuteSeries,
  perSecond,
  type MinuteSample,
} from './status.aggregation';
import { minuteOrderFigures, StatusFigures, type PassRow } from './status.figures';
import type { CatalogAccuracyReport, ReportSeries, StatusReport, SyncResourceReport } from './status.report';
import { StatusSampleRepository, type StoredSample } from './status-sample.repository';

/** Minutes drawn in the per-minute plots (the samples themselves are kept STATUS_RETENTION_HOURS). */
export const PLOT_MINUTES = 60;
const DAY_MS = 86_400_000;
/** Replicas seen within this long are listed. */
const REPLICAS_SEEN_MS = 10 * MINUTE_MS;
const FINAL_OUTCOMES = ['confirmed', 'landed_with_error', 'expired', 'rejected', 'failed'];

/**
 * How long a built report is served again (per replica): any number of open pages, refreshes and scripts cost at
 * most one build (about ten short reads, one at a time) per interval.
 */
export const REPORT_CACHE_MS = 2_000;

const iso = (ms: number): string => new Date(ms).toISOString();
const seconds = (ms: number): number => Math.max(0, Math.round(ms / 100) / 10);

/**
 * The status report (docs/status.md): catalog sync, orders, upstream, webhooks and replicas, read from the
 * recorded per-minute samples, the current minute computed live, and the tables the figures come from.
 * `GET /v1/admin/status` returns it; the page renders it. The routes are public to the rate limiter (the page
 * gates itself), so the cost is bounded here: callers share one build at a time and its result for
 * REPORT_CACHE_MS, and a build reads one statement at a time (one pool connection, never a burst).
 */
@Injectable()
export class StatusService {
  constructor(
    private readonly samples: StatusSampleRepository,
    private readonly figures: StatusFigures,
    private readonly upstream: UpstreamClient,
    private readonly config: AppConfig,
    private readonly sync: SyncConfig,
    private readonly mirror: CatalogMirrorService,
  ) {}

  private building: Promise<StatusReport> | null = null;
  private last: { builtAt: number; report: StatusReport } | null = null;

  /**
   * The report: the one built less than REPORT_CACHE_MS ago, else the build in progress, else a new build. A
   * failed build is not kept (its callers get the error, the next caller builds again). Callers must not modify it.
   */
  report(): Promise<StatusReport> {
    if (this.last !== null && performance.now() - this.last.builtAt < REPORT_CACHE_MS) {
      return Promise.resolve(this.last.report);
    }
    this.building ??= this.build()
      .then((report) => {
        this.last = { builtAt: performance.now(), report };
        return report;
      })
      .finally(() => {
        this.building = null;
      });
    return this.building;
  }

  private async build(): Promise<StatusReport> {
    // The key check may wait on the upstream (bounded by HEALTH_CHECK_TIMEOUT_MS): started first so that it
    // overlaps the reads, awaited in its turn.
    const keyCheck = raceTimeout(this.upstream.verifyKeyCached(), this.config.HEALTH_CHECK_TIMEOUT_MS);
    keyCheck.catch(() => undefined);
    const now = await this.figures.now();
    const current = minuteOf(now);
    const from = current - (PLOT_MINUTES - 1) * MINUTE_MS;
    const sync = await this.syncReport(now);
    const orders = await this.ordersReport(now, from, current);
    const upstream = await this.upstreamReport(now, from, current, keyCheck);
    const catalogAccuracy = await this.catalogAccuracyReport(from, current);
    const webhooks = await this.webhooksReport(now);
    const replicas = await this.figures.replicasSeen(REPLICAS_SEEN_MS);
    return {
      generated_at: iso(now),
      window: { from: iso(from), to: iso(current + MINUTE_MS), minutes: PLOT_MINUTES },
      sync,
      orders,
      upstream,
      catalog_accuracy: catalogAccuracy,
      webhooks,
      replicas: replicas.map((r) => ({
        instance_id: r.instanceId,
        version: r.version,
        started_at: iso(r.startedAt),
        seen_at: iso(r.seenAt),
        live: !r.stopped && now - r.seenAt < this.config.REPLICA_DEAD_AFTER_MS,
      })),
    };
  }

  private async syncReport(now: number): Promise<StatusReport['sync']> {
    const last = await this.figures.lastPasses();
    const completed = await this.figures.lastCompletedPasses();
    const recent = await this.figures.passesSince(now - DAY_MS);
    const resources = (['events', 'listings'] as const).map((resource): SyncResourceReport => {
      const pass = last.find((p) => p.resource === resource) ?? null;
      const done = completed.find((p) => p.resource === resource) ?? null;
      const interval =
        resource === 'events' ? this.sync.SYNC_EVENTS_INTERVAL_MS : this.sync.SYNC_LISTINGS_INTERVAL_MS;
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
        next_pass_due_at: !this.sync.SYNC_ENABLED
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
    return { enabled: this.sync.SYNC_ENABLED, resources, items_per_second };
  }

  private async ordersReport(now: number, from: number, current: number): Promise<StatusReport['orders']> {
    const openByState = await this.figures.openByState();
    const oldest = await this.figures.oldestOpen();
    const stored = await this.samples.read(
      [ORDERS_RECORDED, 'orders.final', 'orders.attempts', 'orders.final_p50_ms', 'orders.final_p99_ms'],
      Math.min(from, minuteOf(now - DAY_MS)),
    );
    // The current minute, and the previous one until a recorder has written it (it waits for the minute to
    // settle), are computed live from `orders`, so the page moves within the minute and has no gap after it.
    const recorded = new Set(stored.filter((s) => s.figure === ORDERS_RECORDED).map((s) => s.minute));
    const liveMinutes = [current - MINUTE_MS, current].filter((m) => !recorded.has(m));
    const live: StoredSample[] = [];
    for (const minute of liveMinutes) {
      const { marker, figures } = await minuteOrderFigures(this.figures, minute);
      live.push(marker, ...figures);
    }
    const all = [...stored.filter((s) => !liveMinutes.includes(s.minute)), ...live];
    const day = all.filter((s) => s.minute >= now - DAY_MS);
    const outcomes = [...new Set([...FINAL_OUTCOMES, ...labels(all, 'orders.final')])];
    return {
      open_by_state: openByState,
      final_24h: totals(day, 'orders.final'),
      oldest_open: oldest && {
        id: oldest.id,
        state: oldest.state,
        age_seconds: seconds(now - oldest.createdAt),
        attempt: oldest.attempt,
      },
      attempts_24h: totals(day, 'orders.attempts'),
      final_per_minute: outcomes
        .filter(
          (outcome) =>
            outcome === 'confirmed' || all.some((s) => s.figure === 'orders.final' && s.label === outcome),
        )
        .map((outcome) => series(outcome, pick(all, 'orders.final', outcome), from, current, 0)),
      time_to_final_ms: [
        series('p50', pick(all, 'orders.final_p50_ms'), from, current, null),
        series('p99', pick(all, 'orders.final_p99_ms'), from, current, null),
      ],
    };
  }

  private async upstreamReport(
    now: number,
    from: number,
    current: number,
    keyCheck: Promise<KeyVerdict | typeof TIMED_OUT>,
  ): Promise<StatusReport['upstream']> {
    const stored = await this.samples.read(
      ['upstream.requests', 'upstream.errors', 'upstream.throttled'],
      from,
    );
    // A hanging upstream must not hang the page: the check goes on, the page says it is pending.
    const verdict = await keyCheck;
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
              reason: `the key check did not answer within ${this.config.HEALTH_CHECK_TIMEOUT_MS} ms (still running)`,
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
   * The served-accuracy panel: this replica's sampler (asked of catalog sync's CatalogMirrorService) and every
   * replica's recorded per-minute counts (`mirror.sampled`, `mirror.stale`, the staleness sums and counts).
   */
  private async catalogAccuracyReport(from: number, current: number): Promise<CatalogAccuracyReport> {
    const mine = this.mirror.servedAccuracy();
    const stored = await this.samples.read(
      [MIRROR_SAMPLED, MIRROR_STALE, MIRROR_STALENESS_SUM, MIRROR_STALENESS_COUNT],
      from,
    );
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

  private async webhooksReport(now: number): Promise<StatusReport['webhooks']> {
    const backlog = await this.figures.webhookBacklog();
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
}

function itemsPerSecond(pass: PassRow): number | null {
  if (pass.finishedAt === null) return null;
  return Math.round(perSecond(pass.items, pass.finishedAt - pass.startedAt) * 10) / 10;
}

function total(points: readonly { value: number | null }[]): number {
  return points.reduce((a, p) => a + (p.value ?? 0), 0);
}

function labels(samples: readonly StoredSample[], figure: string): string[] {
  return [...new Set(samples.filter((s) => s.figure === figure).map((s) => s.label))];
}

function pick(samples: readonly StoredSample[], figure: string, label?: string): MinuteSample[] {
  return samples.filter((s) => s.figure === figure && (label === undefined || s.label === label));
}

function totals(samples: readonly StoredSample[], figure: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) if (s.figure === figure) out[s.label] = (out[s.label] ?? 0) + s.value;
  return out;
}

function series(
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
