import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { SyncPassNotFoundError, SyncPassRunningError } from './catalog-sync.errors';
import { SyncMetrics } from './catalog-sync.metrics';
import { MirrorGenerationRepository } from './mirror-generation.repository';
import type { StoredProtocolConfig } from './protocol-config.repository';
import type { SyncResource } from './sync-pass.entity';
import { SYNC_LOGGER, SyncPassRunner, type PassPlan, type SyncLogger } from './sync-pass.runner';
import { SyncPassRepository, type SyncPassRecord } from './sync-pass.repository';
import {
  summary,
  SyncStatus,
  type ResourceStatus,
  type SyncPassSummary,
  type SyncReadiness,
} from './sync-pass.status';
import { ProtocolConfigCache, type ProtocolConfigView } from './protocol-config.cache';
import type { UpstreamCallOptions } from '../upstream/upstream.types';

export interface StartedPass {
  resource: SyncResource;
  eventId: string | null;
  passId: string | null;
  /** true: a pass for this scope was already running (passId is that pass). */
  alreadyRunning: boolean;
}

/**
 * The mirror of upcoming events and active listings: passes (events, listings, one event's listings) run
 * single-flight across replicas under PostgreSQL leases (docs/catalog-sync.md), the protocol config cache
 * and the mirror generation. Exported by CatalogSyncModule; the read API and seller flows call it.
 */
@Injectable()
export class CatalogSyncService implements OnModuleInit, BeforeApplicationShutdown {
  private readonly running = new Map<string, { cancel: () => void; done: Promise<SyncPassRecord> }>();
  /** Starts between the shutdown check and the pass being registered in `running`. */
  private readonly starting = new Set<Promise<unknown>>();
  private shuttingDown = false;
  private stopping: Promise<void> | null = null;

  constructor(
    private readonly runner: SyncPassRunner,
    private readonly passes: SyncPassRepository,
    private readonly generations: MirrorGenerationRepository,
    private readonly protocolConfigs: ProtocolConfigCache,
    private readonly syncStatus: SyncStatus,
    private readonly metrics: SyncMetrics,
    @Inject(SYNC_LOGGER) private readonly logger: SyncLogger,
  ) {}

  async onModuleInit(): Promise<void> {
    // Seeds the lag gauge from the database (passes of earlier runs and other replicas count).
    await this.syncStatus.refreshLag().catch(() => undefined);
  }

  /**
   * Cancels this replica's running passes (recorded `cancelled`, nothing swept) and waits for them, 5 s at
   * most. A pass still being started when shutdown begins is waited for first, then cancelled too, so no
   * pass is left `running` behind a closed pool. Also called by the scheduler when its loops are stopped (the
   * durable-work block stops them before this hook runs); a second call only waits again.
   */
  beforeApplicationShutdown(): Promise<void> {
    return this.cancelPasses();
  }

  /** As at shutdown: no new pass starts; the running ones are cancelled and waited for (5 s at most). */
  cancelPasses(): Promise<void> {
    this.stopping ??= this.stopPasses();
    return this.stopping;
  }

  private async stopPasses(): Promise<void> {
    this.shuttingDown = true;
    const deadline = Date.now() + 5000;
    const within = (work: Promise<unknown>) =>
      Promise.race([
        work,
        new Promise((resolve) => setTimeout(resolve, Math.max(0, deadline - Date.now())).unref()),
      ]);
    await within(Promise.allSettled(this.starting));
    const runs = [...this.running.values()];
    for (const run of runs) run.cancel();
    await within(Promise.allSettled(runs.map((r) => r.done)));
  }

  /**
   * Starts a pass in the background. Returns the pass id, or the running pass's id with alreadyRunning when
   * one runs for that scope on any replica.
   */
  async start(
    resource: SyncResource,
    eventId: bigint | null,
    trigger: PassPlan['trigger'],
  ): Promise<StartedPass & { done?: Promise<SyncPassRecord> }> {
    if (this.shuttingDown) throw new AppError('SERVICE_UNAVAILABLE', 'The service is shutting down');
    const plan: PassPlan = {
      resource,
      scopeEventId: resource === 'event_listings' ? eventId : null,
      trigger,
    };
    // Registered in `running` in the same continuation that sees the pass started, so once `starting`
    // settles the shutdown hook finds it there.
    const starting = this.runner.start(plan).then((result) => {
      if (!result.started) return { passId: result.runningPassId, done: null };
      const id = result.pass.id;
      const done = result.done.finally(() => {
        this.running.delete(id);
        void this.syncStatus.refreshLag().catch(() => undefined);
      });
      done.catch(() => undefined);
      this.running.set(id, { cancel: result.cancel, done });
      // Shutdown began while the pass was being started: it is cancelled like the ones already running.
      if (this.shuttingDown) result.cancel();
      return { passId: id, done };
    });
    this.starting.add(starting);
    const { passId, done } = await starting.finally(() => this.starting.delete(starting));
    const scope = { resource, eventId: plan.scopeEventId?.toString() ?? null };
    if (!done) return { ...scope, passId, alreadyRunning: true };
    return { ...scope, passId, alreadyRunning: false, done };
  }

  /** Operator API: `resource` events | listings | all, or one event's listings with `eventId`. */
  async trigger(resource: 'events' | 'listings' | 'all', eventId: bigint | null): Promise<StartedPass[]> {
    if (eventId !== null && resource !== 'listings') {
      throw new AppError('VALIDATION_FAILED', 'event_id is only valid with resource "listings"', [
        { field: 'event_id', problems: ['only valid with resource "listings"'] },
      ]);
    }
    const scopes: SyncResource[] =
      eventId !== null ? ['event_listings'] : resource === 'all' ? ['events', 'listings'] : [resource];
    const started: StartedPass[] = [];
    for (const scope of scopes) {
      const { done: _done, ...pass } = await this.start(scope, eventId, 'operator');
      started.push(pass);
    }
    if (started.every((p) => p.alreadyRunning)) {
      throw new SyncPassRunningError(started[0]?.passId ?? null);
    }
    return started;
  }

  /** A scheduled pass: runs it to the end; false when another holder runs that resource. */
  async runScheduled(resource: 'events' | 'listings', trigger: 'startup' | 'schedule'): Promise<boolean> {
    if (this.shuttingDown) return false;
    await this.passes.failAbandoned().catch(() => undefined);
    const started = await this.start(resource, null, trigger);
    if (started.alreadyRunning || !started.done) return false;
    await started.done.catch(() => undefined);
    return true;
  }

  /**
   * Walks one event's listings now (after a sell, cancel or buy, or by an operator) and returns the finished
   * pass (status completed, failed or cancelled). Throws SyncPassRunningError (409) when a refresh of that
   * event is already running.
   */
  async refreshEvent(eventId: bigint): Promise<SyncPassSummary> {
    const started = await this.start('event_listings', eventId, 'refresh');
    if (started.alreadyRunning || !started.done) throw new SyncPassRunningError(started.passId);
    return summary(await started.done);
  }

  async pass(id: string): Promise<SyncPassSummary> {
    const found = await this.passes.get(id);
    if (!found) throw new SyncPassNotFoundError();
    return summary(found);
  }

  async lastCompletedPass(resource: 'events' | 'listings'): Promise<{ id: string; finishedAt: Date } | null> {
    const found = await this.passes.lastCompleted(resource);
    return found?.finishedAt ? { id: found.id, finishedAt: found.finishedAt } : null;
  }

  generation(): Promise<bigint> {
    return this.generations.current();
  }

  /** Marks failed the passes of dead holders (expired leases); the scheduler calls it on every tick. */
  async reapAbandoned(): Promise<void> {
    const gone = await this.passes.failAbandoned();
    for (const pass of gone) {
      this.metrics.leaseTakeover(pass.resource);
      this.logger.warn({ passId: pass.id, resource: pass.resource }, 'abandoned sync pass marked failed');
    }
  }

  /** Operator view per resource: last completed pass, running passes with progress, lag, recent failures. */
  status(): Promise<ResourceStatus[]> {
    return this.syncStatus.status();
  }

  /** Readiness of the mirror (docs/catalog-sync.md): a completed pass per resource, stale ones degraded. */
  readiness(): Promise<SyncReadiness> {
    return this.syncStatus.readiness();
  }

  /** The cached protocol config (memory, else the database, else fetched now); null if never obtained. */
  protocolConfig(): Promise<ProtocolConfigView | null> {
    return this.protocolConfigs.view();
  }

  /**
   * The cached protocol config; when none was ever obtained, fetched now through the same one cache, and its
   * failure thrown (an UpstreamError; or the abort reason when `signal` ends the wait). Checkout and selling use
   * this: the service has one protocol-config cache.
   */
  requireProtocolConfig(
    options: Pick<UpstreamCallOptions, 'signal' | 'requestId'> = {},
  ): Promise<ProtocolConfigView> {
    return this.protocolConfigs.require(options);
  }

  /** Fetches (validated by the client) and stores the protocol config; one fetch at a time. */
  refreshProtocolConfig(): Promise<StoredProtocolConfig | null> {
    return this.protocolConfigs.refresh();
  }
}
