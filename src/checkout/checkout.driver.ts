import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { inBackground } from '../database/pool-gate';
import { CatalogSyncService } from '../catalog-sync/catalog-sync.service';
import { CheckoutConfig } from '../config/checkout.config';
import { TransactionsService } from '../transactions/transactions.service';
import { UpstreamClient } from '../upstream/upstream.client';
import {
  upstreamKeyOf,
  type DriveContext,
  type PrefetchedRevalidation,
  type StepResult,
} from './checkout.context';
import { CheckoutIntegrator } from './checkout.integrator';
import { CheckoutMetrics } from './checkout.metrics';
import { armCrashPoints } from './crash-points';
import { OrderAttempt } from './order.attempt';
import { OrderCommitter } from './order.committer';
import type { OrderEntity } from './order.entity';
import { OrderRepository } from './order.repository';
import { OrderSettlement } from './order.settlement';
import { OrderTracker } from './order.tracker';

/** Steps one drive runs before handing the order back (a safety bound; a purchase needs about six). */
const MAX_STEPS_PER_DRIVE = 16;

/**
 * The checkout state machine (docs/checkout.md). A driver holds an order by lease and runs its steps from the
 * recovery point; every step commits (fenced by lease owner, state and attempt) before the next upstream call,
 * so any replica can resume after a crash. A step whose upstream outcome is unknown hands the order back with
 * a backoff and is repeated idempotently: the same derived key for signing, the same bytes for submission,
 * and a purchase-status lookup before any new attempt.
 *
 * The driver owns the drives (lease, lifecycle, one step after another); the steps live in `OrderAttempt`
 * (revalidate, sign, submit), `OrderTracker` (submissions and status polls) and `OrderSettlement` (purchase
 * status lookup, mirror refresh), and every step ends through `OrderCommitter`.
 */
@Injectable()
export class CheckoutDriver implements OnModuleDestroy {
  readonly instanceId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly repo: OrderRepository;
  private readonly logger = new Logger('Checkout');
  /** Drives in progress on this replica (awaited on shutdown). */
  private readonly active = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  private readonly commits: OrderCommitter;
  private readonly attempt: OrderAttempt;
  private readonly tracker: OrderTracker;
  private readonly settlement: OrderSettlement;

  constructor(
    dataSource: DataSource,
    private readonly config: CheckoutConfig,
    private readonly transactions: TransactionsService,
    upstream: UpstreamClient,
    integrator: CheckoutIntegrator,
    catalog: CatalogSyncService,
    metrics: CheckoutMetrics,
  ) {
    this.repo = new OrderRepository(dataSource);
    armCrashPoints(config.CHECKOUT_CRASH_POINTS, config.crashPointsAllowed);
    metrics.registerGauges(() => this.repo.gauges());
    this.commits = new OrderCommitter(this.repo, this.instanceId, config, metrics, this.logger);
    this.tracker = new OrderTracker(this.commits, transactions, config, this.stopping.signal);
    this.attempt = new OrderAttempt(this.commits, this.tracker, transactions, integrator, config);
    this.settlement = new OrderSettlement(this.commits, transactions, upstream, catalog, dataSource, config);
  }

  /** Upstream idempotency key of an attempt: derived from (order, attempt), so every retry reuses it. */
  upstreamKey(order: Pick<OrderEntity, 'id' | 'clientId' | 'attempt'>): string {
    return upstreamKeyOf(this.transactions, order);
  }

  /** Drives in progress on this replica. */
  get activeDrives(): number {
    return this.active.size;
  }

  /** Shutdown: tracking loops hand their orders back at once; waits for the drives in progress. */
  async onModuleDestroy(): Promise<void> {
    this.stopping.abort();
    await Promise.allSettled(this.active);
  }

  /** Claims the order (if free) and drives it; never throws. */
  wake(orderId: string): Promise<void> {
    return inBackground(() => this.claimAndDrive(orderId));
  }

  private async claimAndDrive(orderId: string): Promise<void> {
    try {
      const claimed = await this.repo.claimOne(orderId, this.instanceId, this.config.CHECKOUT_LEASE_MS);
      if (claimed) await this.drive(claimed);
    } catch (error) {
      this.logger.warn({ err: error, orderId }, 'checkout wake-up failed');
    }
  }

  /** Runs steps of an order this replica holds until it waits, is final, or loses the lease; never throws. */
  drive(order: OrderEntity, revalidation?: Promise<PrefetchedRevalidation>): Promise<void> {
    // Background work: its connections come out of the pool's background share (database/pool-gate.ts).
    const run = inBackground(() => this.run(order, revalidation));
    this.active.add(run);
    void run.finally(() => this.active.delete(run));
    return run;
  }

  private async run(order: OrderEntity, revalidation?: Promise<PrefetchedRevalidation>): Promise<void> {
    let current: OrderEntity | null = order;
    const ctx: DriveContext = { record: null, nextPollAt: 0, revalidation };
    try {
      for (let i = 0; i < MAX_STEPS_PER_DRIVE && current; i++) {
        if (current.recoveryPoint === 'done') return;
        current = await this.step(current, ctx);
      }
      if (current) await this.commits.handBack(current, 0);
    } catch (error) {
      this.logger.error({ err: error, orderId: order.id }, 'checkout step crashed');
      const message = error instanceof Error ? error.message : 'step failed';
      await this.repo
        .release(order.id, this.instanceId, this.commits.backoff(current ?? order), `INTERNAL: ${message}`)
        .catch(() => undefined);
    }
  }

  /** One step from the recovery point: the committed order to continue with, or null (handed back/fenced). */
  private step(order: OrderEntity, ctx: DriveContext): StepResult {
    const steps: Record<OrderEntity['recoveryPoint'], (o: OrderEntity) => StepResult> = {
      revalidate: (o) => this.attempt.revalidate(o, ctx),
      sign: (o) => this.attempt.sign(o, ctx),
      submit: (o) => this.attempt.submit(o, ctx),
      track: (o) => this.tracker.track(o, ctx),
      lookup: (o) => this.settlement.lookup(o),
      refresh: (o) => this.settlement.refresh(o),
      done: () => Promise.resolve(null),
    };
    return steps[order.recoveryPoint](order);
  }
}
