// One piece: a sync pass's life (start → walk → complete → finish) on one held connection under one lease, each
// step a method of its own (the write side is page-batcher.ts); split over files, the steps would pass the
// connection, the lease and the pass's state between them. See the class comment below.
import { Inject, Injectable } from '@nestjs/common';
import type { Pool, PoolClient } from 'pg';
import { PG_POOL } from '../database/database.module';
import { holdConnection, type HeldConnection } from '../database/held-connection';
import { DatabaseConnectionLostError, isConnectionLost } from '../database/pool-gate';
import { HeldLease, LeaseLostError } from '../durable-work/named-lease';
import { NamedLeaseRepository } from '../durable-work/named-lease.repository';
import { UpstreamClient } from '../upstream/upstream.client';
import type { WalkPage } from '../upstream/upstream.types';
import { SyncConfig } from '../config/sync.config';
import { withSpan } from '../tracing/tracing';
import { PassCancelledError } from './catalog-sync.errors';
import { eventKey, listingKey, mapEvent, mapListing, mapPage } from './catalog-sync.mapper';
import { SyncMetrics } from './catalog-sync.metrics';
import { EventBatch, EventRepository } from './event.repository';
import { EventFreshnessRepository } from './event-freshness.repository';
import { ListingBatch } from './listing-batch';
import { ListingRepository } from './listing.repository';
import { MirrorGenerationRepository, type BackfillReason } from './mirror-generation.repository';
import { PageBatcher, type PassTotals } from './page-batcher';
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
export const WRITE_MAX_DELAY_MS = 1000;

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

function errorText(error: unknown): string {
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return text.slice(0, 1000);
}

/**
 * A per-event walk's first page, read while the walk held no connection (startEventWalk): the walk it came
 * from, its request (settled), and the database-clock instant it was requested at.
 */
interface Prefetched {
  walk: AsyncGenerator<WalkPage<unknown>, void, undefined>;
  controller: AbortController;
  step: Promise<IteratorResult<WalkPage<unknown>, void>>;
  observedAt: Date;
  waitMs: number;
}

/** One running pass: what its steps share. */
interface PassRun {
  plan: PassPlan;
  pass: SyncPassRecord;
  client: PoolClient;
  lease: HeldLease;
  context: { passId: string; resource: SyncResource; eventId: string | undefined };
  /** Date.now() at the start (the pass's own duration, not compared across replicas). */
  started: number;
  isEvents: boolean;
  /** A full pass's resource (null for a per-event walk, never a backfill). */
  fullPass: 'events' | 'listings' | null;
  /** Set when the pass starts: a backfill's writes announce no catalog event (issue 32, docs/webhooks.md). */
  backfill: BackfillReason | null;
  /**
   * A listings backfill into an empty mirror writes its batches straight into `listings` (ListingRepository
   * copyNew) until one of them meets a key some other writer inserted; from then on, through the merge.
   */
  copyNew: boolean;
  /** Rows the items with null identifiers could be: the sweep leaves them (sweep-hold.ts). */
  hold: SweepHold;
  /** Where the pass spent its time waiting for upstream pages and mapping them (writes: the batcher). */
  stages: { waitMs: number; mapMs: number };
  /** A per-event walk's first page, already read (startEventWalk). */
  prefetched: Prefetched | null;
}

/**
 * A failed pass's outcome: cancelled when cancelled; named after its lost lease or lost connection (whichever
 * symptom surfaced first: the statement's own 57P01, the client's `error` event, or the walk aborted by it),
 * else after the error. Aborts the lease if the failure did not.
 */
function failureOf(error: unknown, connection: HeldConnection, lease: HeldLease): Outcome {
  const aborted: unknown = lease.signal.aborted ? lease.signal.reason : null;
  const lost =
    connection.lost ?? (isConnectionLost(error) ? new DatabaseConnectionLostError(error as Error) : null);
  const reason =
    aborted instanceof PassCancelledError || aborted instanceof LeaseLostError
      ? aborted
      : (lost ?? aborted ?? error);
  const status = reason instanceof PassCancelledError ? 'cancelled' : 'failed';
  if (!lease.signal.aborted) lease.abort(reason instanceof Error ? reason : new Error(String(reason)));
  return { status, removed: 0, error: errorText(error instanceof LeaseLostError ? error : reason) };
}

/**
 * Runs sync passes: `start` takes the lease (or reports the running pass), records the pass, and runs
 * it in the background on a connection of its own. The walk fetches page N+1 while page N is written (one
 * page of prefetch: memory is two pages at most); each page is one transaction that first checks the lease's
 * fencing token. Only a walk that reached next_cursor = null sweeps (marks unseen rows removed), in the
 * transaction that completes the pass.
 *
 * One piece over 300 lines on purpose: a pass's life (start → walk → complete → finish) on one held connection
 * under one lease, each step a method of its own (the write side is page-batcher.ts); splitting the steps over
 * files would pass the connection, the lease and the pass's state between them for no reader's gain.
 */
@Injectable()
export class SyncPassRunner {
  constructor(
    @Inject(PG_POOL) private readonly pool: Pool,
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

  /**
   * The offset of the database clock over this process's (ms), as the last lease acquisition measured it: a
   * per-event walk stamps the page it requests before it has a pass (startEventWalk) with it.
   */
  private clockOffsetMs: number | null = null;

  async start(plan: PassPlan): Promise<StartResult> {
    if (plan.resource === 'event_listings' && plan.scopeEventId !== null && this.clockOffsetMs !== null) {
      return this.startEventWalk(plan, plan.scopeEventId, this.clockOffsetMs);
    }
    return this.startWalk(plan);
  }

  /**
   * A per-event walk holds no pooled connection while its page is awaited, and when its first page is the last
   * (an event of up to one page of listings: nearly every hot walk) costs 8 statements in two transactions
   * (docs/catalog-sync.md "One-page walks"): (1) lease claimed in one statement, abandoned passes reaped and the
   * pass recorded in one, the lease attached with the COMMIT; the connection goes back; the page is read; (2) the
   * lease's fencing check and release in one statement, then merge + sweep + freshness + completion + generation
   * bump in one, COMMIT. Otherwise (more pages, or the read failed) the pass goes on as any other, from that page.
   */
  private async startEventWalk(plan: PassPlan, eventId: bigint, offsetMs: number): Promise<StartResult> {
    const { config } = this;
    const name = leaseName(plan.resource, eventId);
    const first = await holdConnection(this.pool);
    let pass: SyncPassRecord;
    let token: string;
    try {
      await first.client.query('BEGIN');
      const lease = await this.leases.acquire(first.client, name, this.holderId, config.SYNC_LEASE_TTL_MS);
      if (!lease.acquired) {
        await first.client.query('ROLLBACK');
        first.release();
        return { started: false, runningPassId: lease.passId };
      }
      const created = await this.passes.createReaping(first.client, {
        resource: plan.resource,
        scopeEventId: eventId,
        trigger: plan.trigger,
        holder: this.holderId,
        fencingToken: lease.fencingToken,
      });
      this.reaped(created.abandoned);
      pass = created.pass;
      token = lease.fencingToken;
      await this.leases.attachPassAndCommit(first.client, name, token, pass.id);
    } catch (error) {
      await first.client.query('ROLLBACK').catch(() => undefined);
      first.release(true);
      throw error;
    }
    first.release();
    const lease = new HeldLease(name, token, config.SYNC_LEASE_TTL_MS, this.leases, (error) =>
      this.logger.warn({ passId: pass.id, resource: plan.resource, lease: name }, error.message),
    );
    const done = this.traced(plan, pass, () => this.walkFromFirstPage(plan, eventId, pass, lease, offsetMs));
    return { started: true, pass, done, cancel: () => lease.abort(new PassCancelledError()) };
  }

  /** startEventWalk after its lease: reads the first page, then completes in one transaction or goes on. */
  private async walkFromFirstPage(
    plan: PassPlan,
    eventId: bigint,
    pass: SyncPassRecord,
    lease: HeldLease,
    offsetMs: number,
  ): Promise<SyncPassRecord> {
    const started = Date.now();
    const controller = new AbortController();
    if (lease.signal.aborted) controller.abort(lease.signal.reason);
    const walk: AsyncGenerator<WalkPage<unknown>, void, undefined> = this.upstream.walkActiveListings({
      limit: this.config.SYNC_PAGE_SIZE,
      signal: controller.signal,
      eventId,
    });
    // Stamped before the request, as walkInto stamps its pages (the offset's lower bound).
    const observedAt = new Date(Date.now() + offsetMs);
    const waitStarted = performance.now();
    const step = walk.next();
    step.catch(() => undefined);
    const page = await step.then(
      (r) => (r.done || r.value.nextCursor !== null ? null : r.value),
      () => null,
    );
    const prefetched: Prefetched = {
      walk,
      controller,
      step,
      observedAt,
      waitMs: performance.now() - waitStarted,
    };
    if (page === null || lease.signal.aborted) {
      let onLost: ((error: DatabaseConnectionLostError) => void) | null = null;
      const connection = await holdConnection(this.pool, (error) => onLost?.(error));
      onLost = (error) => lease.abort(error);
      try {
        return await this.runPass(plan, pass, connection, lease, offsetMs, prefetched);
      } finally {
        lease.stop();
        connection.release(lease.signal.aborted);
      }
    }
    return this.completeOnePage(plan, eventId, pass, lease, page, prefetched, started);
  }

  /** The last transaction of a one-page walk (see startEventWalk); a failure is recorded like any pass's. */
  private async completeOnePage(
    plan: PassPlan,
    eventId: bigint,
    pass: SyncPassRecord,
    lease: HeldLease,
    page: WalkPage<unknown>,
    prefetched: Prefetched,
    started: number,
  ): Promise<SyncPassRecord> {
    const items = page.items as never[];
    const mapped = mapPage(items, mapListing, listingKey);
    const hold = new SweepHold();
    if (mapped.skippedCount > 0) hold.note(items, false);
    const context = { passId: pass.id, resource: plan.resource, eventId: eventId.toString() };
    const writeStarted = performance.now();
    lease.stop();
    let outcome: { written: number; removed: number; finishedAt: Date | null };
    const connection = await holdConnection(this.pool);
    try {
      outcome = await inTransaction(connection.client, async () => {
        if (!(await this.leases.releaseHeld(connection.client, lease.name, lease.fencingToken))) {
          throw new LeaseLostError();
        }
        const result = await this.listings.walkWholeEvent(connection.client, {
          eventId,
          rows: mapped.rows,
          observedAt: prefetched.observedAt,
          passStartedAt: pass.startedAt,
          passId: pass.id,
          items: items.length,
          skipped: mapped.skippedCount,
          hold,
        });
        if (result.finishedAt === null)
          throw new LeaseLostError('pass no longer running (marked failed after a takeover)');
        return result;
      });
      connection.release();
    } catch (error) {
      connection.release(true);
      const lost = error instanceof LeaseLostError;
      await this.passes
        .finish(this.pool as Sql, pass.id, 'failed', { error: errorText(error) })
        .catch((e: unknown) =>
          this.logger.error({ ...context, err: e }, 'could not record the pass outcome'),
        );
      if (!lost) await this.leases.release(lease.name, lease.fencingToken).catch(() => undefined);
      this.metrics.passFinished(plan.resource, 'failed', (Date.now() - started) / 1000, 0);
      this.logger.warn({ ...context, error: errorText(error) }, 'sync pass failed');
      return (await this.passes.get(pass.id)) ?? pass;
    } finally {
      await prefetched.walk.return(undefined).catch(() => undefined);
    }
    const { written, removed } = outcome;
    const seconds = (Date.now() - started) / 1000;
    this.metrics.pageWritten(plan.resource, items.length, written, mapped.skippedCount);
    this.metrics.passFinished(plan.resource, 'completed', seconds, removed);
    if (mapped.skippedCount > 0) {
      this.logger.warn(
        { ...context, pages: 1, skipped: mapped.skipped },
        'sync skipped items without identifiers',
      );
    }
    this.logger.info(
      {
        ...context,
        status: 'completed',
        pages: 1,
        items: items.length,
        upserted: written,
        removed,
        skipped: mapped.skippedCount,
        seconds: Math.round(seconds * 1000) / 1000,
        stageSeconds: {
          upstreamWait: Math.round(prefetched.waitMs) / 1000,
          write: Math.round(performance.now() - writeStarted) / 1000,
        },
      },
      'sync pass completed',
    );
    return {
      ...pass,
      status: 'completed',
      finishedAt: outcome.finishedAt,
      pages: 1,
      items: items.length,
      upserted: written,
      removed,
      skipped: mapped.skippedCount,
    };
  }

  private reaped(abandoned: readonly { id: string; resource: SyncResource }[]): void {
    for (const gone of abandoned) {
      this.metrics.leaseTakeover(gone.resource);
      this.logger.warn(
        { passId: gone.id, resource: gone.resource, takenOverBy: this.holderId },
        'sync pass abandoned by its holder marked failed',
      );
    }
  }

  private async startWalk(plan: PassPlan): Promise<StartResult> {
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
        const lease = await this.leases.acquire(client, name, this.holderId, config.SYNC_LEASE_TTL_MS);
        if (!lease.acquired) {
          busy = lease.passId;
          return null;
        }
        this.reaped(await this.passes.failAbandoned(client));
        const pass = await this.passes.create(client, {
          resource: plan.resource,
          scopeEventId: plan.scopeEventId,
          trigger: plan.trigger,
          holder: this.holderId,
          fencingToken: lease.fencingToken,
        });
        await this.leases.attachPass(client, name, lease.fencingToken, pass.id);
        // The offset's LOWER bound (the row's clock_timestamp() was taken before this line runs), not the
        // midpoint: a page stamped with it is never stamped after its read started, so the stale-write guard
        // errs towards not writing. A midpoint overestimated the database clock by up to half this
        // transaction (several round trips; tens of ms on a loaded machine): a walk's page read just before
        // a fresher observation (another replica's walk, ?fresh=true, checkout) was stamped after it and
        // overwrote it with the older price.
        const clockOffsetMs = pass.startedAt.getTime() - Date.now();
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
    this.clockOffsetMs = clockOffsetMs;
    const lease = new HeldLease(name, token, config.SYNC_LEASE_TTL_MS, this.leases, (error) =>
      this.logger.warn({ passId: pass.id, resource: plan.resource, lease: name }, error.message),
    );
    onLost = (error) => {
      this.logger.warn({ passId: pass.id, resource: plan.resource }, error.message);
      lease.abort(error);
    };
    const traced = this.traced(plan, pass, () =>
      this.runPass(plan, pass, connection, lease, clockOffsetMs, null),
    );
    const done = traced.finally(() => {
      lease.stop();
      releaseClient(lease.signal.aborted);
    });
    return { started: true, pass, done, cancel: () => lease.abort(new PassCancelledError()) };
  }

  /** One span per pass, a one-page walk's too (docs/tracing.md): its page fetches and batch writes are children. */
  private traced(
    plan: PassPlan,
    pass: SyncPassRecord,
    run: () => Promise<SyncPassRecord>,
  ): Promise<SyncPassRecord> {
    const attributes = {
      'sync.pass_id': pass.id,
      'sync.resource': plan.resource,
      'sync.trigger': plan.trigger,
      ...(plan.scopeEventId === null ? {} : { 'sync.event_id': plan.scopeEventId.toString() }),
    };
    return withSpan('sync pass', attributes, async (span) => {
      const record = await run();
      span?.setAttributes({
        'sync.status': record.status,
        'sync.pages': record.pages,
        'sync.items': record.items,
      });
      return record;
    });
  }

  /**
   * One pass on its held connection (docs/catalog-sync.md): the walk's pages go through a PageBatcher (one
   * fenced transaction per batch), a walk that reached its end completes in one transaction with the sweep, and
   * finishPass records the outcome whatever it was.
   */
  private async runPass(
    plan: PassPlan,
    pass: SyncPassRecord,
    connection: HeldConnection,
    lease: HeldLease,
    clockOffsetMs: number,
    prefetched: Prefetched | null,
  ): Promise<SyncPassRecord> {
    const { client } = connection;
    const context = { passId: pass.id, resource: plan.resource, eventId: plan.scopeEventId?.toString() };
    this.logger.info({ ...context, trigger: plan.trigger }, 'sync pass started');
    const run: PassRun = {
      plan,
      pass,
      client,
      lease,
      context,
      started: Date.now(),
      isEvents: plan.resource === 'events',
      fullPass: plan.resource === 'event_listings' ? null : plan.resource,
      backfill: null,
      copyNew: false,
      hold: new SweepHold(),
      stages: { waitMs: prefetched?.waitMs ?? 0, mapMs: 0 },
      prefetched,
    };
    const batcher = this.batcherFor(run);
    let outcome: Outcome;
    try {
      await client.query(`SELECT set_config('application_name', $1, false)`, [passApplicationName(pass.id)]);
      await this.repoOf(run).prepareSeen(client);
      if (run.fullPass !== null) run.backfill = await this.generation.backfillReason(client, run.fullPass);
      run.copyNew = run.fullPass === 'listings' && run.backfill === 'empty_mirror';
      await this.walkInto(run, batcher, clockOffsetMs);
      const removed = await this.completeWalk(run, batcher.totals);
      outcome = { status: 'completed', removed, error: null };
    } catch (error) {
      outcome = failureOf(error, connection, lease);
    }
    return this.finishPass(run, batcher, connection, outcome);
  }

  private repoOf(run: PassRun): EventRepository | ListingRepository {
    return run.isEvents ? this.events : this.listings;
  }

  /** The pass's batcher: each batch one transaction (fencing check, rows, counters, generation bump). */
  private batcherFor(run: PassRun): PageBatcher {
    const { client, lease, pass, context, isEvents } = run;
    let lastLog = run.started;
    return new PageBatcher({
      holders: isEvents ? [new EventBatch(), new EventBatch()] : [new ListingBatch(), new ListingBatch()],
      batchRows: this.config.SYNC_WRITE_BATCH_ROWS,
      maxDelayMs: WRITE_MAX_DELAY_MS,
      write: (batch) =>
        inTransaction(client, async () => {
          if (!(await this.leases.holds(client, lease.name, lease.fencingToken))) throw new LeaseLostError();
          if (run.backfill !== null) await this.generation.quietCatalog(client);
          const count = isEvents
            ? await this.events.writeBatch(client, batch.data as EventBatch, pass.id)
            : await this.writeListings(run, batch.data as ListingBatch);
          await this.passes.addPages(client, pass.id, {
            pages: batch.pageCount,
            items: batch.items,
            upserted: count,
            skipped: batch.skippedCount,
          });
          if (count > 0) await this.generation.bump(client);
          return count;
        }),
      written: (batch, rows, totals) => {
        this.metrics.pageWritten(run.plan.resource, batch.items, rows, batch.skippedCount);
        if (batch.skippedCount > 0) {
          this.logger.warn(
            { ...context, pages: totals.pages, skipped: batch.skipped },
            'sync skipped items without identifiers',
          );
        }
        const now = Date.now();
        if (now - lastLog < this.config.SYNC_PROGRESS_LOG_MS) return;
        lastLog = now;
        this.logger.info(
          {
            ...context,
            pages: totals.pages,
            items: totals.items,
            upserted: totals.upserted,
            itemsPerSecond: Math.round((totals.items * 1000) / Math.max(1, now - run.started)),
          },
          'sync pass progress',
        );
      },
    });
  }

  /**
   * A listings batch: COPY straight into `listings` while the pass is a backfill into an empty mirror and no
   * batch met an existing key (every row is new: what the merge would insert), else the merge. A batch that
   * meets one (another writer — a per-event walk, a live observation, another replica — inserted it since the
   * pass started) is written by the merge instead, and so is every later batch: that writer's rows are kept
   * where they are newer (the merge's stale-write guard), and further direct COPYs would likely fail too.
   */
  private async writeListings(run: PassRun, batch: ListingBatch): Promise<number> {
    const { client, pass } = run;
    if (run.copyNew) {
      const copied = await this.listings.copyNew(client, batch, pass.id);
      if (copied !== null) return copied;
      run.copyNew = false;
      this.logger.info(run.context, 'sync backfill met an existing listing: merging from now on');
    }
    return this.listings.writeBatch(client, batch, pass.id);
  }

  /**
   * Walks the upstream to next_cursor = null, every page into the batcher, and waits for the last batch. A
   * failure aborts the lease (stopping the walk's requests) and rethrows the lease's reason when it was lost or
   * cancelled, else the error.
   */
  private async walkInto(run: PassRun, batcher: PageBatcher, clockOffsetMs: number): Promise<void> {
    const { plan, lease, stages, isEvents } = run;
    const dbNow = (): Date => new Date(Date.now() + clockOffsetMs);
    const walkOptions = { limit: this.config.SYNC_PAGE_SIZE, signal: lease.signal };
    const { prefetched } = run;
    const walk: AsyncGenerator<WalkPage<unknown>, void, undefined> = prefetched?.walk ??
    (isEvents
      ? this.upstream.walkUpcomingEvents(walkOptions)
      : this.upstream.walkActiveListings({
          ...walkOptions,
          ...(plan.scopeEventId === null ? {} : { eventId: plan.scopeEventId }),
        }));
    // The prefetched walk was started under its own signal: the lease's abort stops it the same way.
    if (prefetched) {
      if (lease.signal.aborted) prefetched.controller.abort(lease.signal.reason);
      else
        lease.signal.addEventListener('abort', () => prefetched.controller.abort(lease.signal.reason), {
          once: true,
        });
    }
    // Prefetch: PREFETCH_PAGES requests are queued on the walk, so it fetches the next pages while this
    // one is mapped and written. Each is stamped when queued, which is no later than its read starts (the
    // generator runs queued requests one after the other): the stale-write guard errs towards not writing.
    const ahead: { step: Promise<IteratorResult<WalkPage<unknown>, void>>; observedAt: Date }[] = [];
    const queueNext = (): void => {
      const step = walk.next();
      step.catch(() => undefined);
      ahead.push({ step, observedAt: dbNow() });
    };
    if (prefetched) ahead.push({ step: prefetched.step, observedAt: prefetched.observedAt });
    for (let i = ahead.length; i < PREFETCH_PAGES; i++) queueNext();
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
          if (!lease.signal.aborted) await batcher.drain().catch(() => undefined);
          throw error;
        }
        stages.waitMs += performance.now() - waitStarted;
        if (step.done) break;
        queueNext();
        if (lease.signal.aborted) throw lease.signal.reason;
        const mapStarted = performance.now();
        const mapped = isEvents
          ? mapPage(step.value.items as never, mapEvent, eventKey)
          : mapPage(step.value.items as never, mapListing, listingKey);
        stages.mapMs += performance.now() - mapStarted;
        if (mapped.skippedCount > 0) run.hold.note(step.value.items as never, isEvents);
        await batcher.add({ ...mapped, items: step.value.items.length, observedAt: head.observedAt });
      }
      await batcher.drain();
    } catch (error) {
      lease.abort(error instanceof Error ? error : new Error(String(error)));
      await batcher.settle();
      await walk.return(undefined).catch(() => undefined);
      throw lease.signal.reason instanceof LeaseLostError || lease.signal.reason instanceof PassCancelledError
        ? lease.signal.reason
        : error;
    }
  }

  /**
   * The walk reached next_cursor = null — the only way a pass completes and sweeps: one fenced transaction
   * marks the unseen rows removed, records the event's own data_as_of (a per-event walk) or the full pass's
   * completion (and a backfill's one announcement), and completes the pass row. Answers the rows removed.
   */
  private completeWalk(run: PassRun, totals: PassTotals): Promise<number> {
    const { client, lease, pass, plan, fullPass, backfill } = run;
    return inTransaction(client, async () => {
      if (!(await this.leases.holds(client, lease.name, lease.fencingToken))) throw new LeaseLostError();
      if (backfill !== null) await this.generation.quietCatalog(client);
      const count = run.isEvents
        ? await this.events.sweep(client, pass.startedAt, pass.id, run.hold)
        : await this.listings.sweep(client, pass.startedAt, pass.id, plan.scopeEventId, run.hold);
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
  }

  /**
   * Whatever the outcome: the connection goes back (destroyed after a failure), a failed or cancelled pass is
   * recorded, the lease is released unless lost, and the pass is measured and logged. Answers the pass row.
   */
  private async finishPass(
    run: PassRun,
    batcher: PageBatcher,
    connection: HeldConnection,
    outcome: Outcome,
  ): Promise<SyncPassRecord> {
    const { client, lease, pass, plan, context } = run;
    lease.stop();
    const completed = outcome.status === 'completed';
    if (completed) {
      // A per-event walk's tables are small and are reused (emptied) by the connection's next pass: dropping
      // and re-creating them every few hundred ms per hot event is catalog churn and two round trips.
      if (plan.scopeEventId === null)
        await this.repoOf(run)
          .dropSeen(client)
          .catch(() => undefined);
      await client.query('RESET application_name').catch(() => undefined);
    }
    // The pass's own connection goes back (destroyed after a failure: it may be mid-statement) before any
    // bookkeeping that takes one from the pool. Holding it while waiting for a second one deadlocked the pool
    // when a burst of event refreshes (one per confirmed order) held every connection at once.
    connection.release(!completed);
    if (!completed) {
      await this.passes
        .finish(this.pool as Sql, pass.id, outcome.status, { error: outcome.error })
        .catch((e: unknown) =>
          this.logger.error({ ...context, err: e }, 'could not record the pass outcome'),
        );
    }
    if (!lease.lost) {
      await this.leases
        .release(lease.name, lease.fencingToken)
        .catch((e: unknown) => this.logger.warn({ ...context, err: e }, 'could not release the lease'));
    }
    const seconds = (Date.now() - run.started) / 1000;
    this.metrics.passFinished(plan.resource, outcome.status, seconds, outcome.removed);
    const { totals } = batcher;
    const summary = {
      ...context,
      status: outcome.status,
      pages: totals.pages,
      items: totals.items,
      upserted: totals.upserted,
      removed: outcome.removed,
      skipped: totals.skipped,
      ...(totals.skipped > 0 ? { skippedByReason: batcher.skippedByReason } : {}),
      seconds: Math.round(seconds * 1000) / 1000,
      stageSeconds: {
        upstreamWait: Math.round(run.stages.waitMs) / 1000,
        map: Math.round(run.stages.mapMs) / 1000,
        write: Math.round(batcher.writeMs) / 1000,
      },
      itemsPerSecond: Math.round(totals.items / Math.max(seconds, 0.001)),
    };
    if (completed) this.logger.info(summary, 'sync pass completed');
    else this.logger.warn({ ...summary, error: outcome.error }, `sync pass ${outcome.status}`);
    return (await this.passes.get(pass.id)) ?? pass;
  }
}
