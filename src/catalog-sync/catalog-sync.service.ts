import { hostname } from 'node:os';
import { randomBytes } from 'node:crypto';
import {
  Injectable,
  Logger,
  Optional,
  type BeforeApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import type { Pool } from 'pg';
import { DataSource } from 'typeorm';
import { AppError } from '../common/app-error';
import { SyncConfig } from '../config/sync.config';
import { MetricsService } from '../metrics/metrics.service';
import { UpstreamClient } from '../upstream/upstream.client';
import { SyncPassNotFoundError, SyncPassRunningError } from './catalog-sync.errors';
import { SyncMetrics } from './catalog-sync.metrics';
import { EventRepository } from './event.repository';
import { JobLeaseRepository } from './job-lease.repository';
import { ListingRepository } from './listing.repository';
import { MirrorGenerationRepository } from './mirror-generation.repository';
import { ProtocolConfigRepository, type StoredProtocolConfig } from './protocol-config.repository';
import { pgPool } from '../database/data-source';
import type { SyncResource } from './sync-pass.entity';
import { startPass, type PassDeps, type PassPlan, type SyncLogger } from './sync-pass.runner';
import { SyncPassRepository, type SyncPassRecord } from './sync-pass.repository';

/** A pass as other modules and the operator API see it (no lease internals). */
export type SyncPassSummary = Omit<SyncPassRecord, 'holder' | 'fencingToken'>;

export interface ProtocolConfigView {
  stablecoinDecimals: number;
  stablecoinMint: string | null;
  fetchedAt: Date;
}

export interface StartedPass {
  resource: SyncResource;
  eventId: string | null;
  passId: string | null;
  /** true: a pass for this scope was already running (passId is that pass). */
  alreadyRunning: boolean;
}

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

const FULL_RESOURCES = ['events', 'listings'] as const;

function summary(record: SyncPassRecord): SyncPassSummary {
  const { holder: _holder, fencingToken: _token, ...rest } = record;
  return rest;
}

function nestSyncLogger(): SyncLogger {
  const logger = new Logger('CatalogSync');
  return {
    info: (obj, msg) => logger.log({ msg, ...obj }),
    warn: (obj, msg) => logger.warn({ msg, ...obj }),
    error: (obj, msg) => logger.error({ msg, ...obj }),
  };
}

/**
 * The mirror of upcoming events and active listings: passes (events, listings, one event's listings) run
 * single-flight across replicas under PostgreSQL leases (docs/catalog-sync.md), the protocol config cache
 * and the mirror generation. Exported by CatalogSyncModule; the read API and seller flows call it.
 */
@Injectable()
export class CatalogSyncService implements OnModuleInit, BeforeApplicationShutdown {
  readonly holderId = `${hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private readonly pool: Pool;
  private readonly passes: SyncPassRepository;
  private readonly generations: MirrorGenerationRepository;
  private readonly protocolConfigs: ProtocolConfigRepository;
  private readonly deps: PassDeps;
  private readonly metrics: SyncMetrics;
  private readonly logger: SyncLogger = nestSyncLogger();
  private readonly running = new Map<string, { cancel: () => void; done: Promise<SyncPassRecord> }>();
  /** Starts between the shutdown check and the pass being registered in `running`. */
  private readonly starting = new Set<Promise<unknown>>();
  private cachedConfig: StoredProtocolConfig | null = null;
  private configFetch: Promise<StoredProtocolConfig | null> | null = null;
  private readonly startedAt = Date.now();
  private shuttingDown = false;

  constructor(
    dataSource: DataSource,
    private readonly upstream: UpstreamClient,
    readonly config: SyncConfig,
    @Optional() metricsService?: MetricsService,
  ) {
    this.pool = pgPool(dataSource);
    this.passes = new SyncPassRepository(this.pool);
    this.generations = new MirrorGenerationRepository(this.pool);
    this.protocolConfigs = new ProtocolConfigRepository(this.pool);
    this.metrics = new SyncMetrics(metricsService?.registry);
    this.deps = {
      pool: this.pool,
      upstream,
      config,
      leases: new JobLeaseRepository(this.pool),
      passes: this.passes,
      events: new EventRepository(),
      listings: new ListingRepository(),
      generation: this.generations,
      metrics: this.metrics,
      logger: this.logger,
      holderId: this.holderId,
    };
  }

  async onModuleInit(): Promise<void> {
    // Seeds the lag gauge from the database (passes of earlier runs and other replicas count).
    await this.refreshLag().catch(() => undefined);
  }

  /**
   * Cancels this replica's running passes (recorded `cancelled`, nothing swept) and waits for them, 5 s at
   * most. A pass still being started when shutdown begins is waited for first, then cancelled too, so no
   * pass is left `running` behind a closed pool.
   */
  async beforeApplicationShutdown(): Promise<void> {
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
    const starting = startPass(this.deps, plan).then((result) => {
      if (!result.started) return { passId: result.runningPassId, done: null };
      const id = result.pass.id;
      const done = result.done.finally(() => {
        this.running.delete(id);
        void this.refreshLag().catch(() => undefined);
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

  /** Operator view per resource: last completed pass, running passes with progress, lag, recent failures. */
  async status(): Promise<ResourceStatus[]> {
    await this.passes.failAbandoned().catch(() => undefined);
    const now = Date.now();
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
    const now = Date.now();
    const inGrace = now - this.startedAt < this.config.SYNC_READY_GRACE_MS;
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

  /** The cached protocol config (memory, else the database, else fetched now); null if never obtained. */
  async protocolConfig(): Promise<ProtocolConfigView | null> {
    if (!this.cachedConfig) this.cachedConfig = await this.protocolConfigs.load();
    if (!this.cachedConfig) await this.refreshProtocolConfig().catch(() => undefined);
    const c = this.cachedConfig;
    return c
      ? { stablecoinDecimals: c.stablecoinDecimals, stablecoinMint: c.stablecoinMint, fetchedAt: c.fetchedAt }
      : null;
  }

  /** Fetches (validated by the client) and stores the protocol config; one fetch at a time. */
  refreshProtocolConfig(): Promise<StoredProtocolConfig | null> {
    this.configFetch ??= (async () => {
      try {
        const fetched = await this.upstream.getProtocolConfig();
        this.cachedConfig = await this.protocolConfigs.save({
          stablecoinDecimals: fetched.stablecoinDecimals,
          stablecoinMint: fetched.stablecoinMint,
          raw: JSON.parse(JSON.stringify(fetched.raw)) as Record<string, unknown>,
        });
        return this.cachedConfig;
      } catch (error) {
        this.logger.warn({ err: error }, 'protocol config refresh failed; keeping the cached one');
        return this.cachedConfig;
      } finally {
        this.configFetch = null;
      }
    })();
    return this.configFetch;
  }

  /** Marks failed the passes of dead holders (expired leases); the scheduler calls it on every tick. */
  async reapAbandoned(): Promise<void> {
    const gone = await this.passes.failAbandoned();
    for (const pass of gone) {
      this.metrics.leaseTakeover(pass.resource);
      this.logger.warn({ passId: pass.id, resource: pass.resource }, 'abandoned sync pass marked failed');
    }
  }

  private async refreshLag(): Promise<void> {
    for (const resource of FULL_RESOURCES) {
      const last = await this.passes.lastCompleted(resource);
      if (last?.finishedAt) this.metrics.completedAt(resource, last.finishedAt);
    }
  }
}
