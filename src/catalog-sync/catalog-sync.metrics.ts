import { Inject, Injectable, Optional } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { DatabaseClock } from '../database/database-clock';
import { MetricsService } from '../metrics/metrics.service';
import type { SyncResource } from './sync-pass.entity';

/** catalog-sync's Prometheus metrics, registered on the app's registry (MetricsService). */
@Injectable()
export class SyncMetrics {
  private readonly duration: Histogram<'resource' | 'status'>;
  private readonly items: Counter<'resource'>;
  private readonly upserted: Counter<'resource'>;
  private readonly removed: Counter<'resource'>;
  private readonly skipped: Counter<'resource'>;
  private readonly failures: Counter<'resource' | 'status'>;
  private readonly takeovers: Counter<'resource'>;
  private readonly hotWalks: Counter<'status'>;
  private readonly hotSkipped: Counter<'reason'>;
  private readonly staleness: Histogram<'tier'>;
  /** Events in this replica's latest view of the hot set. */
  readonly hotEvents: Gauge;
  /** Fraction of this replica's upstream rate the hot walks may use now (the rest is kept for full passes). */
  readonly hotBudgetShare: Gauge;
  private readonly lastComplete = new Map<SyncResource, number>();
  /** Computed at scrape time from the last completed pass of each resource. */
  readonly lag: Gauge<'resource'>;

  /** `clock`: the database's clock, which pass stamps are taken with (this process's clock without one). */
  constructor(
    @Optional() @Inject(MetricsService) metrics?: Pick<MetricsService, 'registry'>,
    @Optional() @Inject(DatabaseClock) clock?: Pick<DatabaseClock, 'nowMs'>,
  ) {
    const registers = metrics ? [metrics.registry] : [];
    const now = clock ? () => clock.nowMs() : Date.now;
    this.duration = new Histogram({
      name: 'catalog_sync_pass_duration_seconds',
      help: 'Duration of sync passes, by resource and final status',
      labelNames: ['resource', 'status'],
      buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800],
      registers,
    });
    this.items = new Counter({
      name: 'catalog_sync_items_total',
      help: 'Upstream items received by sync passes',
      labelNames: ['resource'],
      registers,
    });
    this.upserted = new Counter({
      name: 'catalog_sync_upserted_total',
      help: 'Mirror rows inserted or changed by sync passes (unchanged rows are not written)',
      labelNames: ['resource'],
      registers,
    });
    this.removed = new Counter({
      name: 'catalog_sync_removed_total',
      help: 'Mirror rows marked removed by completed passes',
      labelNames: ['resource'],
      registers,
    });
    this.skipped = new Counter({
      name: 'catalog_sync_skipped_total',
      help: 'Upstream items skipped (missing or null identifiers, unstorable text)',
      labelNames: ['resource'],
      registers,
    });
    this.failures = new Counter({
      name: 'catalog_sync_pass_failures_total',
      help: 'Sync passes that ended failed or cancelled',
      labelNames: ['resource', 'status'],
      registers,
    });
    this.takeovers = new Counter({
      name: 'catalog_sync_lease_takeovers_total',
      help: 'Running passes of a dead or stalled holder marked failed when their lease was taken over',
      labelNames: ['resource'],
      registers,
    });
    this.hotWalks = new Counter({
      name: 'catalog_sync_hot_walks_total',
      help: 'Per-event walks started by the hot-set scheduler on this replica, by final status (rate: walks per minute)',
      labelNames: ['status'],
      registers,
    });
    this.hotSkipped = new Counter({
      name: 'catalog_sync_hot_walks_skipped_total',
      help: 'Due hot walks not started: busy (another walk of the event runs), budget (upstream budget spent), concurrency',
      labelNames: ['reason'],
      registers,
    });
    this.hotEvents = new Gauge({
      name: 'catalog_sync_hot_events',
      help: 'Events in the hot set (read, with open orders, or starting soon) as this replica last read it',
      registers,
    });
    this.hotBudgetShare = new Gauge({
      name: 'catalog_sync_hot_budget_share',
      help: "Fraction of this replica's upstream request rate the hot walks may use now",
      registers,
    });
    this.staleness = new Histogram({
      name: 'mirror_staleness_seconds',
      help: 'Age of the data_as_of of event-scoped read answers, by tier (hot: the event is in the hot set)',
      labelNames: ['tier'],
      buckets: [0.5, 1, 2, 3, 5, 10, 30, 60, 120, 300, 600, 1800],
      registers,
    });
    const lastComplete = this.lastComplete;
    this.lag = new Gauge({
      name: 'catalog_sync_lag_seconds',
      help: 'Seconds since the last completed pass of each resource (as known to this replica)',
      labelNames: ['resource'],
      registers,
      collect() {
        this.reset();
        for (const [resource, at] of lastComplete) this.set({ resource }, (now() - at) / 1000);
      },
    });
  }

  pageWritten(resource: SyncResource, items: number, upserted: number, skipped: number): void {
    this.items.inc({ resource }, items);
    if (upserted > 0) this.upserted.inc({ resource }, upserted);
    if (skipped > 0) this.skipped.inc({ resource }, skipped);
  }

  passFinished(resource: SyncResource, status: string, seconds: number, removed: number): void {
    this.duration.observe({ resource, status }, seconds);
    if (removed > 0) this.removed.inc({ resource }, removed);
    if (status !== 'completed') this.failures.inc({ resource, status });
  }

  /** The last completed pass of a resource (from the database: other replicas' passes count too). */
  completedAt(resource: SyncResource, finishedAt: Date): void {
    this.lastComplete.set(resource, finishedAt.getTime());
  }

  leaseTakeover(resource: SyncResource): void {
    this.takeovers.inc({ resource });
  }

  hotWalkFinished(status: string): void {
    this.hotWalks.inc({ status });
  }

  hotWalkSkipped(reason: 'busy' | 'budget' | 'concurrency', count = 1): void {
    if (count > 0) this.hotSkipped.inc({ reason }, count);
  }

  servedStaleness(tier: 'hot' | 'cold', seconds: number): void {
    this.staleness.observe({ tier }, Math.max(0, seconds));
  }
}
