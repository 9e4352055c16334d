import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { SyncConfig } from '../config/sync.config';
import { DatabaseClock } from '../database/database-clock';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { UpstreamClient } from '../upstream/upstream.client';
import { SyncMetrics } from './catalog-sync.metrics';
import { CatalogSyncService } from './catalog-sync.service';
import { dueWalks, HotBudget, hotShare, walkSlots } from './hot-budget';
import { DEMAND_FLUSH_MS, HotSet } from './hot-set';

/**
 * The hot-walk scheduler (docs/catalog-sync.md "Live catalog"): on every replica with SYNC_ENABLED, a
 * durable-work loop ticks a few times per SYNC_HOT_TARGET_MS, and again whenever a walk completes. A tick first
 * starts a walk of each hot event whose data would pass the target (the staleness ceiling) before the next tick
 * plus a walk's duration (a moving average); then, with the budget and slots left, walks of the other hot
 * events whose data is at least SYNC_HOT_MIN_INTERVAL_MS old (the floor), so the hot share of the upstream
 * budget is spent rather than idle. Most stale × most demanded first in each group, paced to the hot share of
 * this replica's upstream rate, as many at once as that pace needs (`walkSlots`: a one-page walk holds no database
 * connection while the upstream answers), and at most SYNC_HOT_CONCURRENCY walks of more than one page (hot-budget.ts).
 * The event's lease makes each walk single-flight across replicas: an event another replica walks now is skipped
 * (`busy`) and counted as walked.
 */
@Injectable()
export class HotWalkScheduler implements OnModuleInit {
  private readonly logger = new Logger('HotWalkScheduler');
  private readonly budget = new HotBudget();
  private readonly inFlight = new Set<string>();
  /** Walks in flight estimated at more than one page (they hold a pooled connection): SYNC_HOT_CONCURRENCY at most. */
  private readonly multiPage = new Set<string>();
  /** How long a hot walk takes here (moving average, ms): a walk starts that much before its data is due. */
  private walkMs = 300;

  constructor(
    private readonly sync: CatalogSyncService,
    private readonly hotSet: HotSet,
    private readonly upstream: UpstreamClient,
    private readonly clock: DatabaseClock,
    private readonly work: DurableWorkService,
    private readonly metrics: SyncMetrics,
    private readonly config: SyncConfig,
  ) {}

  /** Timed ticks: four per target and two per floor, at most one per flush of the hot set (walks completing tick too). */
  get tickMs(): number {
    const { SYNC_HOT_TARGET_MS: target, SYNC_HOT_MIN_INTERVAL_MS: floor } = this.config;
    return Math.max(100, Math.min(DEMAND_FLUSH_MS, Math.floor(target / 4), Math.floor(floor / 2)));
  }

  onModuleInit(): void {
    this.work.periodic({
      name: 'catalog-sync:hot-walks',
      enabled: this.config.SYNC_ENABLED,
      intervalMs: this.tickMs,
      run: async () => this.tick(),
    });
  }

  /** One tick: starts the due walks there is room and budget for (never waits for them). */
  tick(): void {
    if (!this.work.claiming) return;
    const share = hotShare(this.sync.fullPassRunning(), this.config.SYNC_FULL_PASS_MIN_SHARE_PCT);
    this.metrics.hotBudgetShare.set(share);
    const rate = this.upstream.currentRatePerSecond * share;
    this.budget.refill(performance.now(), rate);
    const due = dueWalks(
      this.hotSet.events(),
      this.clock.nowMs(),
      this.config.SYNC_HOT_TARGET_MS,
      this.tickMs + this.walkMs,
      this.inFlight,
      this.config.SYNC_HOT_MIN_INTERVAL_MS,
    );
    const slots = walkSlots(rate, this.walkMs, this.config.SYNC_HOT_CONCURRENCY);
    // Only due walks (the ceiling) count as skipped; spare-budget walks simply wait for room.
    const skipped = (from: number): number => due.slice(from).filter((e) => e.due).length;
    let noSlot = 0;
    for (let i = 0; i < due.length; i++) {
      const event = due[i];
      if (this.inFlight.size >= slots) {
        noSlot += skipped(i);
        break;
      }
      const multiPage = event.pages > 1;
      if (multiPage && this.multiPage.size >= this.config.SYNC_HOT_CONCURRENCY) {
        // No connection for another long walk; the one-page walks ranked after it still go.
        if (event.due) noSlot++;
        continue;
      }
      if (!this.budget.take(event.pages)) {
        if (skipped(i) > 0) this.metrics.hotWalkSkipped('budget', skipped(i));
        break;
      }
      this.inFlight.add(event.eventId);
      if (multiPage) this.multiPage.add(event.eventId);
      void this.walk(event.eventId, event.pages).then((completed) => {
        this.inFlight.delete(event.eventId);
        this.multiPage.delete(event.eventId);
        // A completed walk frees a slot and settles its pages: use them now rather than at the next timed tick.
        // (A walk that failed or did not run waits for the timer: no tight loop against a failing dependency.)
        if (completed) setImmediate(() => this.tick());
      });
    }
    if (noSlot > 0) this.metrics.hotWalkSkipped('concurrency', noSlot);
  }

  /** One walk; true when it completed (and a tick may follow at once). Never rejects. */
  private async walk(eventId: string, estimatedPages: number): Promise<boolean> {
    try {
      const started = await this.sync.start('event_listings', BigInt(eventId), 'hot');
      if (!started.done) {
        // Another walk of the event runs (another replica, a fresh read): it covers this one.
        this.budget.settle(estimatedPages, 0);
        this.metrics.hotWalkSkipped('busy');
        this.hotSet.walked(eventId, this.clock.nowMs());
        return false;
      }
      const begun = performance.now();
      const pass = await started.done;
      this.walkMs = Math.min(
        this.config.SYNC_HOT_TARGET_MS / 2,
        0.8 * this.walkMs + 0.2 * (performance.now() - begun),
      );
      this.budget.settle(estimatedPages, pass.pages);
      this.metrics.hotWalkFinished(pass.status);
      if (pass.status !== 'completed') return false;
      this.hotSet.walked(eventId, pass.startedAt.getTime(), pass.pages);
      return true;
    } catch (error) {
      this.budget.settle(estimatedPages, 0);
      this.metrics.hotWalkFinished('error');
      this.logger.debug?.(`hot walk of event ${eventId} not run: ${(error as Error).message}`);
      return false;
    }
  }
}
