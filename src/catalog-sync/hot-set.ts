import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { SyncConfig } from '../config/sync.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { logGate } from '../durable-work/worker-loop';
import { SyncMetrics } from './catalog-sync.metrics';
import { EventDemandRepository, type HotEventRow } from './event-demand.repository';
import { EventFreshnessRepository } from './event-freshness.repository';
import { SyncPassRepository } from './sync-pass.repository';

/** What one read or one order drive adds to an event's demand (an order keeps its event hot longer). */
const WEIGHT = { read: 1, order: 8 } as const;
/** An event whose decayed demand is below this is not hot (one read: hot for about one half-life). */
export const HOT_THRESHOLD = 0.5;
/** Counts kept between flushes, at most (events beyond it wait for the next flush: never unbounded memory). */
const MAX_PENDING_EVENTS = 10_000;
/** Demand counts are added to the database, and the hot set re-read, this often. */
export const DEMAND_FLUSH_MS = 1000;
/** Demand rows are deleted once decayed this many half-lives (2^-20 of what they were). */
const PRUNE_AFTER_HALF_LIVES = 20;
const PRUNE_EVERY_FLUSHES = 60;
/** Finished per-event walks are kept this long in sync_passes (then deleted, 10,000 a minute at most). */
export const EVENT_WALK_RETENTION_MS = 3_600_000;
/** event_freshness rows older than this are deleted (full passes long since cover those events). */
const FRESHNESS_RETENTION_MS = 86_400_000;

/**
 * The hot set (docs/catalog-sync.md "Live catalog"): demand counted in memory per replica (`note`, O(1)),
 * added to `event_demand` about once a second in one statement (decaying with SYNC_HOT_DEMAND_HALF_LIFE_MS on
 * the database clock), and this replica's view of the hot set re-read at the same time — demanded events, and
 * events starting within SYNC_HOT_STARTS_WITHIN_MS, each with its own data_as_of. Runs on every replica
 * (SYNC_ENABLED or not): a read on replica A makes its event hot for the scheduler on replica B.
 */
@Injectable()
export class HotSet implements OnModuleInit {
  private readonly logger = new Logger('HotSet');
  private pending = new Map<string, number>();
  private view = new Map<string, HotEventRow>();
  private flushes = 0;
  private readonly warnGate = logGate(60_000);

  constructor(
    private readonly demand: EventDemandRepository,
    private readonly passes: SyncPassRepository,
    private readonly freshness: EventFreshnessRepository,
    private readonly config: SyncConfig,
    private readonly work: DurableWorkService,
    private readonly metrics: SyncMetrics,
  ) {}

  onModuleInit(): void {
    this.work.periodic({
      name: 'catalog-sync:hot-set',
      intervalMs: DEMAND_FLUSH_MS,
      run: () => this.flush(),
    });
  }

  /** Counts one read or order drive of an event (synchronous, O(1); flushed within about a second). */
  note(eventId: bigint, reason: 'read' | 'order'): void {
    const key = eventId.toString();
    const count = this.pending.get(key);
    if (count === undefined && this.pending.size >= MAX_PENDING_EVENTS) return;
    this.pending.set(key, (count ?? 0) + WEIGHT[reason]);
  }

  /** Whether this replica's latest view of the hot set has the event. */
  has(eventId: bigint | string): boolean {
    return this.view.has(typeof eventId === 'string' ? eventId : eventId.toString());
  }

  /** This replica's latest view of the hot set, most demanded first. */
  events(): readonly HotEventRow[] {
    return [...this.view.values()];
  }

  /** A walk of the event completed (here or, as far as this replica knows, elsewhere): its data is as of `asOfMs`. */
  walked(eventId: string, asOfMs: number, pages?: number): void {
    const row = this.view.get(eventId);
    if (!row) return;
    if (row.asOfMs === null || asOfMs > row.asOfMs) row.asOfMs = asOfMs;
    if (pages !== undefined) row.pages = Math.max(1, pages);
  }

  /** Once a minute: decayed demand, old walk rows and old freshness rows go (bounded deletes, on every replica). */
  private async housekeeping(halfLifeMs: number): Promise<void> {
    await this.demand.prune(halfLifeMs * PRUNE_AFTER_HALF_LIVES);
    await this.passes.pruneEventWalks(EVENT_WALK_RETENTION_MS, 10_000);
    await this.freshness.prune(FRESHNESS_RETENTION_MS);
  }

  /** Adds the pending counts to the database, then re-reads the hot set (one statement each). */
  async flush(): Promise<void> {
    const counts = this.pending;
    this.pending = new Map();
    const { SYNC_HOT_DEMAND_HALF_LIFE_MS: halfLifeMs } = this.config;
    try {
      await this.demand.add(counts, halfLifeMs);
      if (++this.flushes % PRUNE_EVERY_FLUSHES === 0) await this.housekeeping(halfLifeMs);
      const rows = await this.demand.hotSet({
        halfLifeMs,
        threshold: HOT_THRESHOLD,
        startsWithinMs: this.config.SYNC_HOT_STARTS_WITHIN_MS,
        limit: this.config.SYNC_HOT_MAX_EVENTS,
      });
      const view = new Map<string, HotEventRow>();
      for (const row of rows) {
        // A walk this replica saw complete after the read started is not undone by the read.
        const known = this.view.get(row.eventId)?.asOfMs ?? null;
        if (known !== null && (row.asOfMs === null || known > row.asOfMs)) row.asOfMs = known;
        view.set(row.eventId, row);
      }
      this.view = view;
      this.metrics.hotEvents.set(view.size);
    } catch (error) {
      // Counts not written are added back (bounded like note()): demand is a hint, never lost silently twice.
      for (const [id, n] of counts) {
        if (this.pending.size >= MAX_PENDING_EVENTS && !this.pending.has(id)) break;
        this.pending.set(id, (this.pending.get(id) ?? 0) + n);
      }
      if (this.warnGate()) this.logger.warn(`hot set not refreshed: ${(error as Error).message}`);
    }
  }
}
