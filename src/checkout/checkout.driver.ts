import { CatalogSyncService } from '../catalog-sync/catalog-sync.service';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { inBackground } from '../database/pool-gate';
import { CheckoutConfig } from '../config/checkout.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { logWorkError } from '../durable-work/worker-loop';
import { TransactionsService } from '../transactions/transactions.service';
import { outsideTrace, withSpan } from '../tracing/tracing';
import {
  upstreamKeyOf,
  type KeyedOrder,
  type DriveContext,
  type PrefetchedRevalidation,
  type StepResult,
} from './checkout.context';
import { CheckoutLedgerHooks } from './checkout.ledger-hooks';
import { CheckoutMetrics } from './checkout.metrics';
import { armCrashPoints } from './crash-points';
import { OrderAttempt } from './order.attempt';
import { OrderCommitter } from './order.committer';
import type { OrderEntity } from './order.entity';
import { OrderRepository } from './order.repository';
import { OrderSettlement } from './order.settlement';
import { OrderTracker } from './order.tracker';

/** Steps one drive runs before handing the order back (a safety bound; a purchase needs about six). */
export const MAX_STEPS_PER_DRIVE = 16;

/**
 * The checkout state machine (docs/checkout.md). A driver holds an order by a claim (a lease with a fencing token,
 * durable-work/) and runs its steps from the recovery point; every step commits (fenced by the token, state and
 * attempt) before the next upstream call,
 * so any replica can resume after a crash. A step whose upstream outcome is unknown hands the order back with
 * a backoff and is repeated idempotently: the same derived key for signing, the same bytes for submission,
 * and a purchase-status lookup before any new attempt.
 *
 * The driver owns the drives (lease, lifecycle, one step after another); the steps live in `OrderAttempt`
 * (revalidate, sign, submit), `OrderTracker` (submissions and status polls) and `OrderSettlement` (purchase
 * status lookup, mirror refresh), and every step ends through `OrderCommitter`. What the ledger calls back into
 * checkout with (crash points, the order's commits alongside the ledger's, the after-final wake-up) is
 * `CheckoutLedgerHooks`; docs/checkout.md, "One order through checkout and transactions", draws one order's path
 * through both modules.
 */
@Injectable()
export class CheckoutDriver implements OnModuleDestroy {
  /** This replica's name in leases and audit rows (durable work's one identity per process). */
  readonly instanceId: string;
  private readonly logger = new Logger('Checkout');
  /** Drives in progress on this replica (awaited on shutdown). */
  private readonly active = new Set<Promise<void>>();

  constructor(
    private readonly repo: OrderRepository,
    private readonly commits: OrderCommitter,
    private readonly attempt: OrderAttempt,
    private readonly tracker: OrderTracker,
    private readonly settlement: OrderSettlement,
    private readonly transactions: TransactionsService,
    private readonly config: CheckoutConfig,
    private readonly work: DurableWorkService,
    metrics: CheckoutMetrics,
    private readonly catalog: CatalogSyncService,
    hooks: CheckoutLedgerHooks,
  ) {
    this.instanceId = work.instanceId;
    // The ledger's after-final handler wakes an order through this driver (CheckoutLedgerHooks.afterFinal).
    hooks.wakeOrdersWith((orderId) => this.wake(orderId));
    armCrashPoints(config.CHECKOUT_CRASH_POINTS, config.crashPointsAllowed);
    metrics.registerGauges(() => this.repo.gauges());
  }

  /** Upstream idempotency key of an attempt (checkout.context.ts upstreamKeyOf): every retry reuses it. */
  upstreamKey(order: KeyedOrder): string {
    return upstreamKeyOf(this.transactions, order);
  }

  /** Drives in progress on this replica. */
  get activeDrives(): number {
    return this.active.size;
  }

  /** Shutdown: waits for the drives in progress (OrderTracker's polls hand their orders back at once). */
  async onModuleDestroy(): Promise<void> {
    await Promise.allSettled(this.active);
  }

  /**
   * Claims the order (if free) and drives it; never throws. Not from the shutdown drain on (durable work claims
   * nothing new there): the order is due, and a serving replica's recovery worker takes it.
   */
  wake(orderId: string): Promise<void> {
    if (!this.work.claiming) return Promise.resolve();
    return inBackground(() => this.claimAndDrive(orderId));
  }

  private async claimAndDrive(orderId: string): Promise<void> {
    try {
      const claimed = await this.repo.claimOne(orderId, this.config.CHECKOUT_LEASE_MS);
      if (claimed) await this.drive(claimed);
    } catch (error) {
      this.logger.warn({ err: error, orderId }, 'checkout wake-up failed');
    }
  }

  /** Runs steps of an order this replica holds until it waits, is final, or loses the lease; never throws. */
  drive(order: OrderEntity, revalidation?: Promise<PrefetchedRevalidation>): Promise<void> {
    // An event with an open order is hot: its listings are walked every few seconds (docs/catalog-sync.md).
    this.catalog.noteDemand(order.eventId, 'order');
    // Background work: its connections come out of the pool's background share (database/pool-gate.ts).
    const run = inBackground(() => this.run(order, revalidation));
    this.active.add(run);
    void run.finally(() => this.active.delete(run));
    return run;
  }

  /**
   * One drive is one span `checkout drive`, each step a child `checkout <recovery point>` (docs/tracing.md).
   * A drive started by the POST runs in the POST's trace (the request's context is still active here); one
   * resumed by the worker (a retry, a crash, another replica) starts a trace of its own, linked to the POST's
   * span (the traceparent stored with the order) and tied to its log lines by `order.request_id`.
   */
  private async run(order: OrderEntity, revalidation?: Promise<PrefetchedRevalidation>): Promise<void> {
    // Only with tracing on and outside any trace (a resumed drive): one read for the POST's traceparent.
    const linkTo = outsideTrace() ? await this.repo.traceparentOf(order.id).catch(() => null) : null;
    const attributes = {
      'order.id': order.id,
      'order.attempt': order.attempt,
      ...(order.requestId ? { 'order.request_id': order.requestId } : {}),
    };
    return withSpan('checkout drive', attributes, () => this.runSteps(order, revalidation), { linkTo });
  }

  private async runSteps(order: OrderEntity, revalidation?: Promise<PrefetchedRevalidation>): Promise<void> {
    let current: OrderEntity | null = order;
    const ctx: DriveContext = { record: null, nextPollAt: 0, revalidation };
    try {
      for (let i = 0; i < MAX_STEPS_PER_DRIVE && current; i++) {
        if (current.recoveryPoint === 'done') return;
        current = await this.step(current, ctx);
      }
      if (current) await this.commits.handBack(current, 0);
    } catch (error) {
      // The order is picked up again (released here, or its lease runs out).
      logWorkError(this.logger, error, { orderId: order.id }, 'checkout step', 'checkout step crashed');
      const message = error instanceof Error ? error.message : 'step failed';
      const held = current ?? order;
      await this.repo
        .release(held.id, this.commits.claim(held), this.commits.backoff(held), `INTERNAL: ${message}`)
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
    const attributes = { 'order.id': order.id, 'order.attempt': order.attempt, 'order.state': order.state };
    return withSpan(`checkout ${order.recoveryPoint}`, attributes, async (span) => {
      const next = await steps[order.recoveryPoint](order);
      // Where the order goes from here: its next recovery point, or `handed_back` (waits, fenced, final).
      if (next) span?.setAttributes({ 'order.next': next.recoveryPoint, 'order.next_state': next.state });
      else span?.setAttribute('order.next', 'handed_back');
      return next;
    });
  }
}
