import { Injectable } from '@nestjs/common';
import { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import { raceTimeout, TIMED_OUT } from '../common/race-timeout';
import { AppConfig } from '../config/app.config';
import { SyncConfig } from '../config/sync.config';
import { UpstreamClient } from '../upstream/upstream.client';
import type { KeyVerdict } from '../upstream/upstream.types';
import {
  MINUTE_MS,
  MIRROR_SAMPLED,
  MIRROR_STALE,
  MIRROR_STALENESS_COUNT,
  MIRROR_STALENESS_SUM,
  ORDERS_RECORDED,
  minuteOf,
} from './status.aggregation';
import { minuteOrderFigures, StatusFigures } from './status.figures';
import type { CatalogAccuracyReport, StatusReport } from './status.report';
import {
  catalogAccuracySection,
  iso,
  labels,
  pick,
  seconds,
  series,
  syncSection,
  totals,
  upstreamSection,
  webhooksSection,
} from './status.sections';
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
    return syncSection(now, { last, completed, recent }, this.sync);
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
    return upstreamSection({ now, from, current }, stored, verdict, this.config.HEALTH_CHECK_TIMEOUT_MS);
  }

  /** The served-accuracy panel (catalogAccuracySection): this replica's sampler and every replica's samples. */

  private async catalogAccuracyReport(from: number, current: number): Promise<CatalogAccuracyReport> {
    const mine = this.mirror.servedAccuracy();
    const stored = await this.samples.read(
      [MIRROR_SAMPLED, MIRROR_STALE, MIRROR_STALENESS_SUM, MIRROR_STALENESS_COUNT],
      from,
    );
    return catalogAccuracySection(mine, stored, from, current);
  }

  private async webhooksReport(now: number): Promise<StatusReport['webhooks']> {
    return webhooksSection(now, await this.figures.webhookBacklog());
  }
}
