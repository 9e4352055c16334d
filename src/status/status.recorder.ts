import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Counter, Histogram } from 'prom-client';
import { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import { AppConfig } from '../config/app.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { logGate, type WorkerLoop } from '../durable-work/worker-loop';
import { MetricsService } from '../metrics/metrics.service';
import {
  counterDeltas,
  MINUTE_MS,
  MIRROR_SAMPLED,
  MIRROR_STALE,
  MIRROR_STALENESS_COUNT,
  MIRROR_STALENESS_SUM,
  ORDERS_RECORDED,
  minuteOf,
  retentionCutoff,
  upstreamDeltas,
} from './status.aggregation';
import { minuteOrderFigures, StatusFigures } from './status.figures';
import { StatusSampleRepository } from './status-sample.repository';

/** Past minutes a recorder fills in when their figures are missing (after a restart, a failed tick). */
const BACKFILL_MINUTES = 10;
/** A minute is recorded once it ended this long ago (a transaction committing just after it still counts). */
const SETTLE_MS = 5_000;
/**
 * The read path's histogram of the age of the data it serves, by tier (`hot` / `cold`): observed by listings/ (the
 * live-sync half of issue 30); recorded here as a sum and a count per minute when this process has it.
 */
export const STALENESS_METRIC = 'mirror_staleness_seconds';
/** At most one warning per this long while recording fails. */
const FAILURE_LOG_EVERY_MS = 60_000;

/**
 * Records the status page's time series (docs/status.md) on a durable-work loop, every
 * STATUS_RECORD_INTERVAL_MS on every replica: this replica's upstream attempts since its last tick are added to
 * its own row of the current minute; each past minute's order figures are computed from `orders` and stored
 * once, all or nothing, by whichever replica writes the minute's marker first (so replicas never double-count or
 * mix two readings); samples past STATUS_RETENTION_HOURS are deleted. The served-accuracy sampler's counts (asked of
 * CatalogMirrorService) and the read path's staleness sums are added per replica like the upstream attempts.
 */
@Injectable()
export class StatusRecorder implements OnModuleDestroy {
  private readonly logger = new Logger('StatusRecorder');
  private readonly loop: WorkerLoop<never>;
  private lastTotals = new Map<string, number>();
  private lastMirrorTotals = new Map<string, number>();
  private readonly failureLogGate = logGate(FAILURE_LOG_EVERY_MS);

  constructor(
    private readonly samples: StatusSampleRepository,
    private readonly figures: StatusFigures,
    private readonly durableWork: DurableWorkService,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
    private readonly mirror: CatalogMirrorService,
  ) {
    this.loop = durableWork.periodic({
      name: 'status-recorder',
      intervalMs: config.STATUS_RECORD_INTERVAL_MS,
      run: () => this.tick(),
    });
  }

  /** One tick; a failure is logged (rate-limited) and the next tick tries again (upstream counts are kept). */
  async tick(): Promise<void> {
    try {
      await this.recordUpstream();
      await this.recordMirror();
      const now = await this.figures.now();
      await this.recordOrderMinutes(now);
      await this.samples.prune(retentionCutoff(now, this.config.STATUS_RETENTION_HOURS));
    } catch (error) {
      if (!this.failureLogGate()) return;
      const reason = error instanceof Error ? error.message : String(error);
      this.logger.warn({ reason }, 'status samples not recorded; the next tick retries');
    }
  }

  /** The last counts of this replica are written before it stops (best effort). */
  async onModuleDestroy(): Promise<void> {
    await this.loop.stop();
    await this.recordUpstream().catch(() => undefined);
    await this.recordMirror().catch(() => undefined);
  }

  private async recordMirror(): Promise<void> {
    const totals = await this.mirrorTotals();
    await this.samples.addToCurrentMinute(
      this.durableWork.instanceId,
      counterDeltas(this.lastMirrorTotals, totals),
    );
    // Only once written: a failed write leaves the counts for the next tick.
    this.lastMirrorTotals = totals;
  }

  /** This replica's sampler totals (from catalog sync) and staleness sums and counts per tier, keyed `figure|label`. */
  private async mirrorTotals(): Promise<Map<string, number>> {
    const accuracy = this.mirror.servedAccuracy();
    const totals = new Map<string, number>([
      [`${MIRROR_SAMPLED}|`, accuracy.sampled],
      [`${MIRROR_STALE}|`, accuracy.stale],
    ]);
    const staleness = this.metrics.registry.getSingleMetric(STALENESS_METRIC) as Histogram | undefined;
    if (!staleness) return totals;
    for (const { labels, value, metricName } of (await staleness.get()).values) {
      const tier = String(labels.tier ?? '');
      if (metricName === `${STALENESS_METRIC}_sum`) totals.set(`${MIRROR_STALENESS_SUM}|${tier}`, value);
      if (metricName === `${STALENESS_METRIC}_count`) totals.set(`${MIRROR_STALENESS_COUNT}|${tier}`, value);
    }
    return totals;
  }

  private async recordUpstream(): Promise<void> {
    const totals = await this.upstreamTotals();
    const deltas = upstreamDeltas(this.lastTotals, totals);
    await this.samples.addToCurrentMinute(this.durableWork.instanceId, deltas);
    // Only once written: a failed write leaves the counts for the next tick.
    this.lastTotals = totals;
  }

  /** `upstream_requests_total` of this process, keyed `operation|status`. */
  private async upstreamTotals(): Promise<Map<string, number>> {
    const metric = this.metrics.registry.getSingleMetric('upstream_requests_total') as Counter | undefined;
    const totals = new Map<string, number>();
    if (!metric) return totals;
    for (const { labels, value } of (await metric.get()).values) {
      totals.set(`${String(labels.operation)}|${String(labels.status)}`, value);
    }
    return totals;
  }

  /** Order figures of the settled minutes of the last BACKFILL_MINUTES that no replica recorded yet. */
  private async recordOrderMinutes(now: number): Promise<void> {
    const last = minuteOf(now - SETTLE_MS) - MINUTE_MS;
    const first = last - (BACKFILL_MINUTES - 1) * MINUTE_MS;
    const recorded = await this.samples.recordedMinutes(ORDERS_RECORDED, first);
    for (let minute = first; minute <= last; minute += MINUTE_MS) {
      if (recorded.has(minute)) continue;
      const { marker, figures } = await minuteOrderFigures(this.figures, minute);
      await this.samples.writeOnce(marker, figures);
    }
  }
}
