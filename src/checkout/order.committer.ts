import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { CheckoutConfig } from '../config/checkout.config';
import { backoffDelay, retryAfterOf, type BackoffSettings } from '../durable-work/backoff.policy';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { leaseDeadline } from '../durable-work/lease-deadline';
import type { Fence } from '../durable-work/lease.sql';
import { sanitisedUpstreamMessage } from '../upstream/upstream-error.mapper';
import { UpstreamError } from '../upstream/upstream.error';
import type { StepResult } from './checkout.context';
import type { OrderFailureCode } from './checkout.errors';
import { CheckoutMetrics } from './checkout.metrics';
import { crashPoint, type CrashPointName } from './crash-points';
import { FINAL_ORDER_STATES, type OrderEntity, type OrderState } from './order.entity';
import { OrderRepository, type AuditStep, type OrderPatch } from './order.repository';
import { addSpanEvent } from '../tracing/tracing';

/** Names of the commits a step makes: each has its crash points `before_commit_<name>` / `after_commit_<name>`. */
export type CommitName =
  'revalidated' | 'signing' | 'signed' | 'submitted' | 'expired' | 'new_attempt' | 'final';

/** The orders queue's settings of the one backoff policy (durable-work/backoff.policy.ts; docs/RETRIES.md). */
export function orderBackoffSettings(config: CheckoutConfig): BackoffSettings {
  return {
    baseMs: config.CHECKOUT_RETRY_BASE_DELAY_MS,
    maxMs: config.CHECKOUT_RETRY_MAX_DELAY_MS,
    retryAfterCapMs: 4 * config.CHECKOUT_RETRY_MAX_DELAY_MS,
  };
}

/**
 * How every step of a drive ends: a commit fenced by the drive's claim (its token, and state and attempt as the
 * step found them), a final state, or the order handed back with a backoff. One log line per committed step; a
 * commit refused by the token is the drive's end (another claim holds the order) and is counted as fenced off.
 */
@Injectable()
export class OrderCommitter {
  private readonly logger = new Logger('Checkout');
  private readonly instanceId: string;
  /** The backoff's jitter source (a spec fixes it to read the policy's ceiling). */
  random: () => number = Math.random;

  constructor(
    private readonly repo: OrderRepository,
    private readonly config: CheckoutConfig,
    private readonly metrics: CheckoutMetrics,
    private readonly work: DurableWorkService,
  ) {
    this.instanceId = work.instanceId;
  }

  /** The drive's claim of `order`: who holds it, and the token every write is fenced by. */
  claim(order: OrderEntity): { owner: string; token: string | null } {
    return { owner: this.instanceId, token: order.leaseToken };
  }

  /**
   * The drive's claim as a `Fence` for the calls that can move money (signing, a first submission): the ledger's
   * statements check its token, and the upstream client starts no attempt past its `notAfter`, the lease's end
   * by this process's clock (from when the claim was taken or last renewed: `heldSince`) less a margin.
   * Undefined for an order this drive does not hold.
   */
  fence(order: Pick<OrderEntity, 'id' | 'leaseToken' | 'heldSince'>): Fence | undefined {
    if (!order.leaseToken) return undefined;
    return {
      table: 'orders',
      id: order.id,
      token: order.leaseToken,
      notAfter: leaseDeadline(order.heldSince, this.config.CHECKOUT_LEASE_MS),
    };
  }

  /** Commits a final state: `confirmed` goes on to the mirror refresh, every other one is done. */
  finish(
    order: OrderEntity,
    state: OrderState,
    code: OrderFailureCode | null,
    reason: string | null,
    extra: OrderPatch = {},
  ): StepResult {
    return this.commit(order, 'final', {
      ...extra,
      state,
      recoveryPoint: state === 'confirmed' ? 'refresh' : 'done',
      failureCode: code,
      failureReason: reason,
    });
  }

  /**
   * The order's final state from a final ledger status: `confirmed` completes it (the mirror refresh follows),
   * `landed_with_error` fails it with `reason`. Nothing else ever completes an order.
   */
  landed(order: OrderEntity, status: 'confirmed' | 'landed_with_error', reason: string): StepResult {
    if (status === 'confirmed')
      return this.finish(order, 'confirmed', null, null, { upstreamStatus: 'confirmed' });
    return this.finish(order, 'landed_with_error', 'LANDED_WITH_ERROR', reason, {
      upstreamStatus: 'landed_with_error',
    });
  }

  /**
   * Commits a step (crash points around it; several steps may share one commit), logs one line per step and
   * observes final states.
   */
  async commit(
    order: OrderEntity,
    name: CommitName | CommitName[],
    patch: OrderPatch,
    detail: string | null = null,
    steps: AuditStep[] | string = patch.state ?? (Array.isArray(name) ? name[0] : name),
  ): StepResult {
    const names = Array.isArray(name) ? name : [name];
    const audit = typeof steps === 'string' ? [{ step: steps }] : steps;
    for (const n of names) crashPoint(`before_commit_${n}` as CrashPointName);
    const committed = await this.repo.commit(
      order.id,
      this.claim(order),
      { state: order.state, attempt: order.attempt },
      patch,
      { steps: audit, detail, requestId: order.requestId },
      this.config.CHECKOUT_LEASE_MS,
    );
    for (const n of names) crashPoint(`after_commit_${n}` as CrashPointName);
    if (!committed) {
      this.logger.warn(
        { orderId: order.id, requestId: order.requestId, step: audit.map((a) => a.step).join('+') },
        'checkout step fenced out (lease lost)',
      );
      if (order.leaseToken)
        this.work.fencedOff({ table: 'orders', id: order.id, token: order.leaseToken }, 'commit');
      return null;
    }
    for (const a of audit) {
      // Several steps may share one commit (revalidated+signing+signed+submitted): each is an event on the span
      // of the checkout step that committed it (docs/tracing.md).
      addSpanEvent('order.step', {
        step: a.step,
        state: a.state ?? committed.state,
        attempt: committed.attempt,
      });
      this.logger.log(
        {
          orderId: committed.id,
          requestId: committed.requestId,
          step: a.step,
          state: a.state ?? committed.state,
          attempt: committed.attempt,
          recoveryPoint: a.recoveryPoint ?? committed.recoveryPoint,
          ...(committed.failureCode ? { failureCode: committed.failureCode } : {}),
        },
        'checkout step',
      );
    }
    if (!FINAL_ORDER_STATES.includes(order.state) && FINAL_ORDER_STATES.includes(committed.state))
      this.metrics.observeFinal(committed);
    return committed;
  }

  /** Hands the order back with a backoff (Retry-After honoured); the same step runs again later. */
  async retryLater(order: OrderEntity, error: unknown): Promise<null> {
    const message = describeError(error);
    this.logger.log(
      {
        orderId: order.id,
        requestId: order.requestId,
        step: order.recoveryPoint,
        error: message,
        // The upstream's own words, for operators only (the order's records keep the sanitised `message`).
        ...(error instanceof UpstreamError && {
          upstream: { message: error.message, excerpt: error.excerpt },
        }),
      },
      'checkout step deferred',
    );
    await this.repo.release(order.id, this.claim(order), this.backoff(order, error), message);
    return null;
  }

  /** Hands the order back, due again in `delayMs` (the worker of any replica continues it). */
  handBack(order: OrderEntity, delayMs: number): Promise<null> {
    return this.repo.release(order.id, this.claim(order), delayMs, null).then(() => null);
  }

  /**
   * The delay before a failed step runs again: the one backoff policy (full jitter up to base·2^failures, capped
   * at CHECKOUT_RETRY_MAX_DELAY_MS), Retry-After honoured up to 4× that maximum.
   */
  backoff(order: OrderEntity, error?: unknown): number {
    return backoffDelay(
      orderBackoffSettings(this.config),
      order.stepFailures,
      retryAfterOf(error),
      this.random,
    );
  }
}

/** An error as one line for the order's failure reason and the logs (code, status, message; never a stack). */
export function describeError(error: unknown): string {
  // Tenant-visible (audit steps, failure reasons, webhook events): never the upstream's body or our operator hints.
  if (error instanceof UpstreamError) return `${error.code}: ${sanitisedUpstreamMessage(error)}`;
  if (error instanceof AppError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : 'unknown error';
}
