import { Inject, Injectable } from '@nestjs/common';
import { Pool, type PoolClient } from 'pg';
import { holdConnection, type HeldConnection } from '../database/held-connection';
import { DatabaseConnectionLostError, isConnectionLost } from '../database/pool-gate';
import { HeldLease, LeaseLostError } from '../durable-work/named-lease';
import { NamedLeaseRepository } from '../durable-work/named-lease.repository';
import { UpstreamClient } from '../upstream/upstream.client';
import type { WalkPage } from '../upstream/upstream.types';
import { SyncConfig } from '../config/sync.config';
import { withSpan } from '../tracing/tracing';
import { PassCancelledError } from './catalog-sync.errors';
import { eventKey, listingKey, mapEvent, mapListing, mapPage, type SkipReason } from './catalog-sync.mapper';
import { SyncMetrics } from './catalog-sync.metrics';
import { EventBatch, EventRepository } from './event.repository';
import { EventFreshnessRepository } from './event-freshness.repository';
import { ListingBatch, ListingRepository } from './listing.repository';
import { MirrorGenerationRepository, type BackfillReason } from './mirror-generation.repository';
import type { Sql } from './sql';
import { leaseName } from './sync-lease';
import { SweepHold } from './sweep-hold';
import { SyncPassRepository, type SyncPassRecord } from './sync-pass.repository';
import type { SyncResource } from './sync-pass.entity';

export interface PassPlan {
  resource: SyncResource;
  /** Only for `event_listings` (an event refresh). */
  scopeEventId: bigint | null;
  /** `hot`: the hot-walk scheduler; `fresh`: a read with `fresh=true` (CatalogSyncService.walkEvent). */
  trigger: 'startup' | 'schedule' | 'operator' | 'refresh' | 'hot' | 'fresh';
}

export interface SyncLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/** Injection token of the SyncLogger (CatalogSyncModule binds it to a Nest Logger). */
export const SYNC_LOGGER = Symbol('SYNC_LOGGER');

/** Injection token of this process's name in leases and pass rows (DurableWorkService.instanceId). */
export const SYNC_HOLDER_ID = Symbol('SYNC_HOLDER_ID');

export type StartResult =
  | { started: true; pass: SyncPassRecord; done: Promise<SyncPassRecord>; cancel: () => void }
  | { started: false; runningPassId: string | null };

/**
 * Pages requested ahead of the one being mapped: the walk fetches them while a batch is written (memory:
 * this many parsed pages, besides the one being mapped).
 */
const PREFETCH_PAGES = 2;

/**
 * `application_name` of a pass's connection while it walks, so an operator (or a test) finds the backend of
 * pass N in `pg_stat_activity`; reset before the connection goes back to the pool.
 */
export function passApplicationName(passId: string): string {
  return `ticket-resale-bff:sync-pass:${passId}`;
}

/** A batch of pages is written at the latest this long after its first page arrived. */
const WRITE_MAX_DELAY_MS = 1000;

interface Outcome {
  status: 'completed' | 'failed' | 'cancelled';
  removed: number;
  error: string | null;
}

async function inTransaction<T>(client: PoolClient, work: () => Promise<T>): Promise<T> {
  await client.query('BEGIN');
  try {
    const result = await work();
    await client.query('COMMIT');
    return result;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
}

/** Adds per-reason skip counts into `into`. */
function addSkipped(
  into: Partial<Record<SkipReason, number>>,
  counts: Partial<Record<SkipReason, number>>,
): void {
  for (const [reason, n] of Object.entries(counts) as [SkipReason, number][]) {
    into[reason] = (into[reason] ?? 0) + n;
  }
}

function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.slice(0, 1000);
}

/**
 * Runs sync passes: `start` takes the lease (or reports the running pass), records the pass, and runs
 * it in the background on a connection of its own. The walk fetches page N+1 while page N is written (one
 * page of prefetch: memory is two pages at most); each page is one transaction that first checks the lease's
 * fencing token. Only a walk that reached next_cursor = null sweeps (marks unseen rows removed), in the
 * transaction that completes the pass.
 */
@Injectable()
export class SyncPassRunner {
  constructor(
    private readonly pool: Pool,
    private readonly upstream: UpstreamClient,
    private readonly config: SyncConfig,
    private readonly leases: NamedLeaseRepository,
    private readonly passes: SyncPassRepository,
    private readonly events: EventRepository,
    private readonly listings: ListingRepository,
    private readonly generation: MirrorGenerationRepository,
    private readonly metrics: SyncMetrics,
    @Inject(SYNC_LOGGER) private readonly logger: SyncLogger,
    /** Identifies this process among replicas (DurableWorkService.instanceId). */
    @Inject(SYNC_HOLDER_ID) private readonly holderId: string,
    private readonly freshness: EventFreshnessRepository,
  ) {}

  async start(plan: PassPlan): Promise<StartResult> {
    const { config } = this;
    const name = leaseName(plan.resource, plan.scopeEventId);
    // A lost connection (terminated backend, restart) stops the pass through its lease, once there is one.
    let onLost: ((error: DatabaseConnectionLostError) => void) | null = null;
    const connection = await holdConnection(this.pool, (error) => onLost?.(error));
    const { client } = connection;
    const releaseClient = (destroy = false): void => connection.release(destroy);
    let acquired: { pass: SyncPassRecord; token: string; clockOffsetMs: number } | null;
    let busy: string | null = null;
    try {
      acquired = await inTransaction(client, async () => {
        const before = Date.now();
        const lease = await this.leases.acquire(client, name, this.holderId, config.SYNC_LEASE_TTL_MS);
        if (!lease.acquired) {
          busy = lease.passId;
          return null;
        }
        const abandoned = await this.passes.failAbandoned(client);
        for (const gone of abandoned) {
          this.metrics.leaseTakeover(gone.resource);
          this.logger.warn(
            { passId: gone.id, resource: gone.resource, takenOverBy: this.holderId },
            'sync pass abandoned by its holder marked failed',
          );
        }
        const pass = await this.passes.create(client, {
          resource: plan.resource,
          scopeEventId: plan.scopeEventId,
          trigger: plan.trigger,
          holder: this.holderId,
          fencingToken: lease.fencingToken,
        });
        await this.leases.attachPass(client, name, lease.fencingToken, pass.id);
        const clockOffsetMs = pass.startedAt.getTime() - (before + Date.now()) / 2;
        return { pass, token: lease.fencingToken, clockOffsetMs };
      });
    } catch (error) {
      releaseClient(true);
      throw error;
    }
    if (!acquired) {
      releaseClient();
      return { started: false, runningPassId: busy };
    }
    const { pass, token, clockOffsetMs } = acquired;
    const lease = new HeldLease(name, token, config.SYNC_LEASE_TTL_MS, this.leases, (error) =>
      this.logger.warn({ passId: pass.id, resource: plan.resource, lease: name }, error.message),
    );
    onLost = (error) => {
      this.logger.warn({ passId: pass.id, resource: plan.resource }, error.message);
      lease.abort(error);
    };
    // One span per pass (docs/tracing.md): its page fetches and batch writes are children.
    const attributes = {
      'sync.pass_id': pass.id,
      'sync.resource': plan.resource,
      'sync.trigger': plan.trigger,
      ...(plan.scopeEventId === null ? {} : { 'sync.event_id': plan.scopeEventId.toString() }),
    };
    const traced = withSpan('sync pass', attributes, async (span) => {
      const record = await this.runPass(plan, pass, connection, lease, clockOffsetMs);
      span?.setAttributes({
        'sync.status': record.status,
        'sync.pages': record.pages,
        'sync.items': record.items,
      });
      return record;
    });
    const done = traced.finally(() => {
      lease.stop();
      releaseClient(lease.signal.aborted);
    });
    return { started: true, pass, done, cancel: () => lease.abort(new PassCancelledError()) };
  }

  private async runPass(
    plan: PassPlan,
    pass: SyncPassRecord,
    connection: HeldConnection,
    lease: HeldLease,
    clockOffsetMs: number,
  ): Promise<SyncPassRecord> {
    const { logger, metrics, config } = this;
    const { client } = connection;
    const started = Date.now();
    const dbNow = (): Date => new Date(Date.now() + clockOffsetMs);
    const context = { passId: pass.id, resource: plan.resource, eventId: plan.scopeEventId?.toString() };
    logger.info({ ...context, trigger: plan.trigger }, 'sync pass started');
    const totals = { pages: 0, items: 0, upserted: 0, skipped: 0 };
    /** Where the pass spent its time: waiting for upstream pages, mapping them, writing them. */
    const stages = { waitMs: 0, mapMs: 0, writeMs: 0 };
    const skippedByReason: Partial<Record<SkipReason, number>> = {};
    /** Rows the items with null identifiers could be: the sweep leaves them (sweep-hold.ts). */
    const hold = new SweepHold();
    let lastLog = started;
    let outcome: Outcome;
    const isEvents = plan.resource === 'events';
    const repo = isEvents ? this.events : this.listings;
    /** A full pass's resource (null for a per-event walk, never a backfill). */
    const fullPass = plan.resource === 'event_listings' ? null : plan.resource;
    /** Set when the pass starts: a backfill's writes announce no catalog event (issue 32, docs/webhooks.md). */
    let backfill: BackfillReason | null = null;

    /** Pages mapped but not written yet; written together once they hold SYNC_WRITE_BATCH_ROWS rows. */
    interface Batch {
      data: EventBatch | ListingBatch;
      pageCount: number;
      items: number;
      skippedCount: number;
      skipped: Partial<Record<SkipReason, number>>;
      startedAt: number;
    }
    /** Two batches' row holders, used in turn: one filled while the other is written (buffers reused). */
    const holders: (EventBatch | ListingBatch)[] = isEvents
      ? [new EventBatch(), new EventBatch()]
      : [new ListingBatch(), new ListingBatch()];
    let turn = 0;
    const newBatch = (): Batch => ({
      data: (() => {
        const holder = holders[turn++ % 2];
        holder.reset();
        return holder;
      })(),
      pageCount: 0,
      items: 0,
      skippedCount: 0,
      skipped: {},
      startedAt: Date.now(),
    });

    /** One transaction per batch: fencing check, the rows, the pass's counters, and the generation bump. */
    const writeBatch = async (batch: Batch): Promise<void> => {
      const written = await inTransaction(client, async () => {
        if (!(await this.leases.holds(client, lease.name, lease.fencingToken))) throw new LeaseLostError();
        if (backfill !== null) await this.generation.quietCatalog(client);
        const count = isEvents
          ? await this.events.writeBatch(client, batch.data as EventBatch, pass.id)
          : await this.listings.writeBatch(client, batch.data as ListingBatch, pass.id);
        await this.passes.addPages(client, pass.id, {
          pages: batch.pageCount,
          items: batch.items,
          upserted: count,
          skipped: batch.skippedCount,
        });
        if (count > 0) await this.generation.bump(client);
        return count;
      });
      totals.pages += batch.pageCount;
      totals.items += batch.items;
      totals.upserted += written;
      totals.skipped += batch.skippedCount;
      metrics.pageWritten(plan.resource, batch.items, written, batch.skippedCount);
      addSkipped(skippedByReason, batch.skipped);
      if (batch.skippedCount > 0) {
        logger.warn(
          { ...context, pages: totals.pages, skipped: batch.skipped },
          'sync skipped items without identifiers',
        );
      }
      const now = Date.now();
      if (now - lastLog >= config.SYNC_PROGRESS_LOG_MS) {
        lastLog = now;
        logger.info(
          {
            ...context,
            pages: totals.pages,
            items: totals.items,
            upserted: totals.upserted,
            itemsPerSecond: Math.round((totals.items * 1000) / Math.max(1, now - started)),
          },
          'sync pass progress',
        );
      }
    };

    let batch = newBatch();
    /**
     * The batch being written (at most one): the next one is mapped meanwhile. Typed by a cast: it is
     * assigned only inside flush(), so a plain `null` initializer would leave tsc narrowing it to null.
     */
    let inFlight = null as Promise<void> | null;
    /** Waits for the batch in flight (its error fails the pass here), then starts writing the current one. */
    const flush = async (): Promise<void> => {
      const writeWaitStarted = performance.now();
      if (inFlight !== null) await inFlight;
      inFlight = null;
      stages.writeMs += performance.now() - writeWaitStarted;
      if (batch.pageCount === 0) return;
      const full = batch;
      batch = newBatch();
      inFlight = writeBatch(full);
      inFlight.catch(() => undefined);
    };
    const drain = async (): Promise<void> => {
      await flush();
      await flush();
    };

    try {
      await client.query(`SELECT set_config('application_name', $1, false)`, [passApplicationName(pass.id)]);
      await repo.prepareSeen(client);
      if (fullPass !== null) backfill = await this.generation.backfillReason(client, fullPass);
      const walkOptions = { limit: config.SYNC_PAGE_SIZE, signal: lease.signal };
      const walk: AsyncGenerator<WalkPage<unknown>, void, undefined> = isEvents
        ? this.upstream.walkUpcomingEvents(walkOptions)
        : this.upstream.walkActiveListings({
            ...walkOptions,
            ...(plan.scopeEventId === null ? {} : { eventId: plan.scopeEventId }),
          });
      // Prefetch: PREFETCH_PAGES requests are queued on the walk, so it fetches the next pages while this
      // one is mapped and written. Each is stamped when queued, which is no later than its read starts (the
      // generator runs queued requests one after the other): the stale-write guard errs towards not writing.
      const ahead: { step: Promise<IteratorResult<WalkPage<unknown>, void>>; observedAt: Date }[] = [];
      const queueNext = (): void => {
        const step = walk.next();
        step.catch(() => undefined);
        ahead.push({ step, observedAt: dbNow() });
      };
      for (let i = 0; i < PREFETCH_PAGES; i++) queueNext();
      try {
        for (;;) {
          const waitStarted = performance.now();
          let step: IteratorResult<WalkPage<unknown>, void>;
          const head = ahead.shift();
          if (head === undefined) throw new Error('prefetch queue empty');
          try {
            step = await head.step;
          } catch (error) {
            // The upstream failed the walk: what was read before still gets written (the pass fails and
            // sweeps nothing either way).
            if (!lease.signal.aborted) await drain().catch(() => undefined);
            throw error;
          }
          stages.waitMs += performance.now() - waitStarted;
          if (step.done) break;
          const pageObservedAt = head.observedAt;
          queueNext();
          if (lease.signal.aborted) throw lease.signal.reason;
          const mapStarted = performance.now();
          const mapped = isEvents
            ? mapPage(step.value.items as never, mapEvent, eventKey)
            : mapPage(step.value.items as never, mapListing, listingKey);
          const added = batch.data.add(mapped.rows as never[], pageObservedAt);
          stages.mapMs += performance.now() - mapStarted;
          if (!added) {
            // A key of this page is already in the batch: write the batch first, start a new one with it.
            await flush();
            if (!batch.data.add(mapped.rows as never[], pageObservedAt))
              throw new Error('page keys not unique');
          }
          batch.pageCount++;
          batch.items += step.value.items.length;
          batch.skippedCount += mapped.skippedCount;
          if (mapped.skippedCount > 0) hold.note(step.value.items as never, isEvents);
          addSkipped(batch.skipped, mapped.skipped);
          // A batch is written once it is big enough, or once it has waited long enough (a slow upstream
          // still sees its pages written within about a second).
          if (
            batch.data.rows >= config.SYNC_WRITE_BATCH_ROWS ||
            Date.now() - batch.startedAt >= WRITE_MAX_DELAY_MS
          ) {
            await flush();
          }
        }
        await drain();
      } catch (error) {
        lease.abort(error instanceof Error ? error : new Error(String(error)));
        if (inFlight !== null) await inFlight.catch(() => undefined);
        await walk.return(undefined).catch(() => undefined);
        throw lease.signal.reason instanceof LeaseLostError ||
          lease.signal.reason instanceof PassCancelledError
          ? lease.signal.reason
          : error;
      }
      // The walk reached next_cursor = null: the only way a pass completes and sweeps.
      const removed = await inTransaction(client, async () => {
        if (!(await this.leases.holds(client, lease.name, lease.fencingToken))) throw new LeaseLostError();
        if (backfill !== null) await this.generation.quietCatalog(client);
        const count = isEvents
          ? await this.events.sweep(client, pass.startedAt, pass.id, hold)
          : await this.listings.sweep(client, pass.startedAt, pass.id, plan.scopeEventId, hold);
        if (count > 0) await this.generation.bump(client);
        // The event's own data_as_of (per-event freshness) commits with the walk that earned it.
        if (plan.scopeEventId !== null) {
          await this.freshness.record(client, plan.scopeEventId, pass.startedAt, pass.id, totals.pages);
        }
        if (!(await this.passes.finish(client, pass.id, 'completed', { removed: count }))) {
          throw new LeaseLostError('pass no longer running (marked failed after a takeover)');
        }
        if (fullPass !== null) {
          await this.generation.fullPassCompleted(
            client,
            fullPass,
            backfill === null
              ? null
              : {
                  passId: pass.id,
                  resource: fullPass,
                  reason: backfill,
                  items: totals.items,
                  upserted: totals.upserted,
                  removed: count,
                },
          );
        }
        return count;
      });
      outcome = { status: 'completed', removed, error: null };
    } catch (error) {
      const aborted: unknown = lease.signal.aborted ? lease.signal.reason : null;
      // A lost connection is named as such, whichever of its symptoms surfaced first (the statement's own
      // 57P01, the client's `error` event, or the walk aborted by it).
      const lost =
        connection.lost ?? (isConnectionLost(error) ? new DatabaseConnectionLostError(error as Error) : null);
      const reason =
        aborted instanceof PassCancelledError || aborted instanceof LeaseLostError
          ? aborted
          : (lost ?? aborted ?? error);
      const status = reason instanceof PassCancelledError ? 'cancelled' : 'failed';
      outcome = { status, removed: 0, error: errorText(error instanceof LeaseLostError ? error : reason) };
      if (!lease.signal.aborted) lease.abort(reason instanceof Error ? reason : new Error(String(reason)));
    }
    lease.stop();
    const completed = outcome.status === 'completed';
    if (completed) {
      // A per-event walk's tables are small and are reused (emptied) by the connection's next pass: dropping
      // and re-creating them every few hundred ms per hot event is catalog churn and two round trips.
      if (plan.scopeEventId === null) await repo.dropSeen(client).catch(() => undefined);
      await client.query('RESET application_name').catch(() => undefined);
    }
    // The pass's own connection goes back (destroyed after a failure: it may be mid-statement) before any
    // bookkeeping that takes one from the pool. Holding it while waiting for a second one deadlocked the pool
    // when a burst of event refreshes (one per confirmed order) held every connection at once.
    connection.release(!completed);
    if (!completed) {
      await this.passes
        .finish(this.pool as Sql, pass.id, outcome.status, { error: outcome.error })
        .catch((e: unknown) => logger.error({ ...context, err: e }, 'could not record the pass outcome'));
    }
    if (!lease.lost) {
      await this.leases
        .release(lease.name, lease.fencingToken)
        .catch((e: unknown) => logger.warn({ ...context, err: e }, 'could not release the lease'));
    }
    const seconds = (Date.now() - started) / 1000;
    metrics.passFinished(plan.resource, outcome.status, seconds, outcome.removed);
    const summary = {
      ...context,
      status: outcome.status,
      pages: totals.pages,
      items: totals.items,
      upserted: totals.upserted,
      removed: outcome.removed,
      skipped: totals.skipped,
      ...(totals.skipped > 0 ? { skippedByReason } : {}),
      seconds: Math.round(seconds * 1000) / 1000,
      stageSeconds: {
        upstreamWait: Math.round(stages.waitMs) / 1000,
        map: Math.round(stages.mapMs) / 1000,
        write: Math.round(stages.writeMs) / 1000,
      },
      itemsPerSecond: Math.round(totals.items / Math.max(seconds, 0.001)),
    };
    if (outcome.status === 'completed') logger.info(summary, 'sync pass completed');
    else logger.warn({ ...summary, error: outcome.error }, `sync pass ${outcome.status}`);
    return (await this.passes.get(pass.id)) ?? pass;
  }
}
