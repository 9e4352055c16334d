import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Counter } from 'prom-client';
import { AppConfig } from '../config/app.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { logGate, type WorkerLoop } from '../durable-work/worker-loop';
import { MetricsService } from '../metrics/metrics.service';
import { MINUTE_MS, ORDERS_RECORDED, minuteOf, retentionCutoff, upstreamDeltas } from './status.aggregation';
import { minuteOrderFigures, StatusFiguresRepository } from './status-figures.repository';
import { StatusSampleRepository } from './status-sample.repository';

/** Past minutes a recorder fills in when their figures are missing (after a restart, a failed tick). */
const BACKFILL_MINUTES = 10;
/** A minute is recorded once it ended this long ago (a transaction committing just after it still counts). */
const SETTLE_MS = 5_000;
/** At most one warning per this long while recording fails. */
const FAILURE_LOG_EVERY_MS = 60_000;

/**
 * Records the status page's time series (docs/status.md) on a durable-work loop, every
 * STATUS_RECORD_INTERVAL_MS on every replica: this replica's upstream attempts since its last tick are added to
 * its own row of the current minute; each past minute's order figures are computed from `orders` and stored
 * once, all or nothing, by whichever replica writes the minute's marker first (so replicas never double-count or
 * mix two readings); samples past STATUS_RETENTION_HOURS are deleted.
 */
@Injectable()
export class StatusRecorder implements OnModuleDestroy {
  private readonly logger = new Logger('StatusRecorder');
  private readonly loop: WorkerLoop<never>;
  private lastTotals = new Map<string, number>();
  private readonly failureLogGate = logGate(FAILURE_LOG_EVERY_MS);

  constructor(
    private readonly samples: StatusSampleRepository,
    private readonly figures: StatusFiguresRepository,
    private readonly durableWork: DurableWorkService,
    private readonly metrics: MetricsService,
    private readonly config: AppConfig,
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
