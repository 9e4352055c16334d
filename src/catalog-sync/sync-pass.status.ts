import { Injectable } from '@nestjs/common';
import { SyncConfig } from '../config/sync.config';
import { DatabaseClock } from '../database/database-clock';
import { SyncMetrics } from './catalog-sync.metrics';
import { SyncPassRepository, type SyncPassRecord } from './sync-pass.repository';

/** A pass as other modules and the operator API see it (no lease internals). */
export type SyncPassSummary = Omit<SyncPassRecord, 'holder' | 'fencingToken'>;

export interface ResourceStatus {
  resource: 'events' | 'listings';
  lastCompleted: SyncPassSummary | null;
  running: (SyncPassSummary & { itemsPerSecond: number })[];
  /** Seconds since the last completed pass finished; null when none. */
  lagSeconds: number | null;
  recentFailures: SyncPassSummary[];
}

export interface SyncReadiness {
  up: boolean;
  details: Record<string, unknown>;
}

/** The resources a full pass walks (readiness, lag and the operator status are about these). */
export const FULL_RESOURCES = ['events', 'listings'] as const;

export function summary(record: SyncPassRecord): SyncPassSummary {
  const { holder: _holder, fencingToken: _token, ...rest } = record;
  return rest;
}

/** How fresh the mirror is, read from the recorded passes of every replica: operator status, readiness, lag. */
@Injectable()
export class SyncStatus {
  private readonly startedAt = Date.now();

  constructor(
    private readonly passes: SyncPassRepository,
    private readonly config: SyncConfig,
    private readonly metrics: SyncMetrics,
    private readonly clock: DatabaseClock,
  ) {}

  /** Operator view per resource: last completed pass, running passes with progress, lag, recent failures. */
  async status(): Promise<ResourceStatus[]> {
    await this.passes.failAbandoned().catch(() => undefined);
    // Pass stamps are the database's clock; lag and rates compare them with the same clock.
    const now = this.clock.nowMs();
    return Promise.all(
      FULL_RESOURCES.map(async (resource) => {
        const [last, running, failures] = await Promise.all([
          this.passes.lastCompleted(resource),
          this.passes.running(resource),
          this.passes.recentFailures(resource, 5),
        ]);
        return {
          resource,
          lastCompleted: last ? summary(last) : null,
          running: running.map((r) => ({
            ...summary(r),
            itemsPerSecond: Math.round((r.items * 1000) / Math.max(1, now - r.startedAt.getTime())),
          })),
          lagSeconds: last?.finishedAt ? Math.max(0, (now - last.finishedAt.getTime()) / 1000) : null,
          recentFailures: failures.map(summary),
        };
      }),
    );
  }

  /**
   * Readiness: with SYNC_ENABLED, after SYNC_READY_GRACE_MS from startup a completed pass must exist for each
   * resource (down otherwise). A resource whose last complete pass is older than SYNC_STALE_AFTER_MS is
   * reported `stale` (degraded, still up): browsing from a stale mirror beats no browsing.
   */
  async readiness(): Promise<SyncReadiness> {
    if (!this.config.SYNC_ENABLED) return { up: true, details: { enabled: false } };
    const inGrace = Date.now() - this.startedAt < this.config.SYNC_READY_GRACE_MS;
    const now = this.clock.nowMs();
    const details: Record<string, unknown> = {};
    let up = true;
    const stale: string[] = [];
    for (const resource of FULL_RESOURCES) {
      const last = await this.passes.lastCompleted(resource);
      if (!last?.finishedAt) {
        details[resource] = { lastCompleted: null };
        if (!inGrace) up = false;
        continue;
      }
      const lagSeconds = Math.round((now - last.finishedAt.getTime()) / 1000);
      const isStale = lagSeconds * 1000 > this.config.SYNC_STALE_AFTER_MS;
      if (isStale) stale.push(resource);
      details[resource] = { lastCompleted: last.finishedAt.toISOString(), lagSeconds, stale: isStale };
    }
    details.state = !up ? 'no complete pass' : stale.length > 0 ? 'degraded' : 'fresh';
    if (inGrace) details.inStartupGrace = true;
    return { up, details };
  }

  /** Sets the lag gauge from the last completed pass of each resource (any replica's). */
  async refreshLag(): Promise<void> {
    for (const resource of FULL_RESOURCES) {
      const last = await this.passes.lastCompleted(resource);
      if (last?.finishedAt) this.metrics.completedAt(resource, last.finishedAt);
    }
  }
}
