// One piece: the only export of the catalog-sync module (DESIGN.md: a module exports only its service), so every
// question another module asks catalog sync is a method here, most of them short delegations to the runner,
// the repositories and the mirror; the work itself lives in those files.
import { Inject, Injectable, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { SyncPassNotFoundError, SyncPassRunningError } from './catalog-sync.errors';
import { SyncMetrics } from './catalog-sync.metrics';
import { MirrorGenerationRepository } from './mirror-generation.repository';
import type { StoredProtocolConfig } from './protocol-config.repository';
import type { SyncResource } from './sync-pass.entity';
import { SYNC_LOGGER, SyncPassRunner, type PassPlan, type SyncLogger } from './sync-pass.runner';
import { ABANDONED_PASS_ERROR, SyncPassRepository, type SyncPassRecord } from './sync-pass.repository';
import { SyncPassFiguresRepository, type PassFigure } from './sync-pass-figures.repository';
import {
  summary,
  SyncStatus,
  type ResourceStatus,
  type SyncPassSummary,
  type SyncReadiness,
} from './sync-pass.status';
import { ProtocolConfigCache, type ProtocolConfigView } from './protocol-config.cache';
import { HotSet } from './hot-set';
import type { UpstreamCallOptions } from '../upstream/upstream.types';

/** How often a walk of an event running on another replica is looked up while a caller waits for it. */
const REMOTE_WALK_POLL_MS = 100;
/** At shutdown, the cancelled passes are waited for this long at most. */
export const SYNC_SHUTDOWN_WAIT_MS = 5000;
/** A walk that cannot be started or joined (its lease changing hands) is tried this many times. */
const WALK_START_TRIES = 20;

export interface WalkEventOptions {
  /** Rejects (WalkTimeoutError) after this long; the walk itself goes on for whoever else waits for it. */
  timeoutMs?: number;
  signal?: AbortSignal;
  /** The pass's trigger when this call starts the walk (default `fresh`). */
  trigger?: 'fresh' | 'hot' | 'refresh';
}

/** walkEvent gave up waiting (timeout or abort); the walk may still complete. */
export class WalkTimeoutError extends Error {
  constructor(message = 'the walk of the event did not complete in time') {
    super(message);
    this.name = 'WalkTimeoutError';
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms).unref());

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
  private readonly running = new Map<
    string,
    { resource: SyncResource; cancel: () => void; done: Promise<SyncPassRecord> }
  >();
  /** walkEvent calls on this replica, per event: concurrent callers share one walk. */
  private readonly walks = new Map<string, Promise<SyncPassSummary>>();
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
    private readonly hotSet: HotSet,
    private readonly passFigures: SyncPassFiguresRepository,
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
    const deadline = Date.now() + SYNC_SHUTDOWN_WAIT_MS;
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
      this.running.set(id, { resource, cancel: result.cancel, done });
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

  /**
   * One complete walk of an event's active listings (docs/catalog-sync.md "Live catalog"): single-flight per
   * event across replicas (the event's lease), and concurrent callers coalesce onto the running walk — on this
   * replica through one shared promise, on another replica by waiting for its pass to end. Resolves with the
   * finished pass (completed, failed or cancelled); rejects with WalkTimeoutError on timeout or abort.
   */
  walkEvent(eventId: bigint, options: WalkEventOptions = {}): Promise<SyncPassSummary> {
    const key = eventId.toString();
    let walk = this.walks.get(key);
    if (!walk) {
      walk = this.walkOnce(eventId, options.trigger ?? 'fresh');
      this.walks.set(key, walk);
      const shared = walk;
      void shared.finally(() => this.walks.delete(key)).catch(() => undefined);
    }
    return this.within(walk, options);
  }

  private async walkOnce(eventId: bigint, trigger: PassPlan['trigger']): Promise<SyncPassSummary> {
    for (let attempt = 0; attempt < WALK_START_TRIES; attempt++) {
      const started = await this.start('event_listings', eventId, trigger);
      if (started.done) return summary(await started.done);
      // Running elsewhere (or on this replica, started by refreshEvent or the scheduler): wait for its end.
      if (started.passId !== null) {
        const finished = await this.waitForPass(started.passId);
        // A walk whose holder died (reaped: abandoned) covered nothing and nobody else will finish it: walk the
        // event now rather than share its failure (test/e2e/live-catalog-kill.e2e-spec.ts).
        if (finished?.status === 'failed' && finished.error === ABANDONED_PASS_ERROR) continue;
        if (finished) return summary(finished);
      }
      // The lease was taken but its pass not attached yet, or the pass row vanished: try again shortly.
      await sleep(REMOTE_WALK_POLL_MS);
    }
    throw new WalkTimeoutError('could neither start nor join a walk of the event');
  }

  /** The pass once it is no longer running (bounded by a few lease lifetimes); null when it cannot be read. */
  private async waitForPass(passId: string): Promise<SyncPassRecord | null> {
    const local = this.running.get(passId);
    if (local) return local.done;
    for (let i = 0; i < 3000; i++) {
      const pass = await this.passes.get(passId);
      if (!pass) return null;
      if (pass.status !== 'running') return pass;
      await sleep(REMOTE_WALK_POLL_MS);
      // A dead holder's pass stays `running` until reaped: reaping here ends the wait after its lease expiry.
      if (i % 10 === 9) await this.reapAbandoned().catch(() => undefined);
    }
    return null;
  }

  private within<T>(work: Promise<T>, { timeoutMs, signal }: WalkEventOptions): Promise<T> {
    if (timeoutMs === undefined && signal === undefined) return work;
    return new Promise<T>((resolve, reject) => {
      const timer =
        timeoutMs === undefined
          ? undefined
          : setTimeout(() => finish(() => reject(new WalkTimeoutError())), timeoutMs);
      const onAbort = (): void => finish(() => reject(new WalkTimeoutError('the walk was aborted')));
      const finish = (settle: () => void): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        settle();
      };
      if (signal?.aborted) return onAbort();
      signal?.addEventListener('abort', onAbort, { once: true });
      work.then(
        (value) => finish(() => resolve(value)),
        (error: unknown) => finish(() => reject(error)),
      );
    });
  }

  /** Counts a read or an order drive of an event for the hot set (synchronous, O(1), in memory). */
  noteDemand(eventId: bigint, reason: 'read' | 'order'): void {
    this.hotSet.note(eventId, reason);
  }

  /** Whether this replica's latest view of the hot set has the event. */
  isHot(eventId: bigint | string): boolean {
    return this.hotSet.has(eventId);
  }

  /** The read path's `mirror_staleness_seconds{tier}`: the age of an event-scoped answer's data_as_of. */
  observeServedAge(eventId: string, ageSeconds: number): void {
    this.metrics.servedStaleness(this.hotSet.has(eventId) ? 'hot' : 'cold', ageSeconds);
  }

  /** Whether a full pass (events or listings) runs on this replica now (hot walks then leave it its share). */
  fullPassRunning(): boolean {
    for (const run of this.running.values()) if (run.resource !== 'event_listings') return true;
    return false;
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

  /** The latest pass of each full resource, whatever its outcome (the status page, docs/status.md). */
  lastPasses(): Promise<PassFigure[]> {
    return this.passFigures.lastPasses();
  }

  /** The latest completed pass of each full resource (the status page). */
  lastCompletedPasses(): Promise<PassFigure[]> {
    return this.passFigures.lastCompletedPasses();
  }

  /** Full passes finished from `from` (epoch ms) on, oldest first, bounded (the status page). */
  passesSince(from: number): Promise<PassFigure[]> {
    return this.passFigures.passesSince(from);
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
