import { Inject, Injectable } from '@nestjs/common';
import type { Pool } from 'pg';
import { PG_POOL } from '../database/database.module';
import { poolGateOf, Semaphore } from '../database/pool-gate';
import { CatalogSyncService } from '../catalog-sync/catalog-sync.service';
import { CheckoutConfig } from '../config/checkout.config';
import { TransactionsService } from '../transactions/transactions.service';
import { UpstreamClient } from '../upstream/upstream.client';
import { UpstreamError } from '../upstream/upstream.error';
import { upstreamKeyOf, type StepResult } from './checkout.context';
import { crashPoint } from './crash-points';
import { describeError, OrderCommitter } from './order.committer';
import type { OrderEntity } from './order.entity';
import { interpretPurchaseStatus, type PurchaseVerdict } from './purchase-status';

/** Refresh of the mirror after a confirmed order: tries before giving up on it (the order stays confirmed). */
export const MAX_REFRESH_TRIES = 5;

/**
 * What settles an order once tracking is out of the picture: the purchase status by key, asked before any new
 * attempt (the recovery point `lookup`), and the mirror's event refresh after `confirmed` (`refresh`).
 */
@Injectable()
export class OrderSettlement {
  /**
   * Mirror refreshes running on this replica. A refresh holds a pooled connection for its whole pass and takes
   * a second one while it finishes, so unbounded they could hold every background connection at once, each
   * waiting for one more (the pool ran dry under a burst of confirmations). Sized on first use (the pool gate
   * is installed after the providers are built).
   */
  private refreshes: Semaphore | null = null;

  constructor(
    private readonly commits: OrderCommitter,
    private readonly transactions: TransactionsService,
    private readonly upstream: UpstreamClient,
    private readonly catalog: CatalogSyncService,
    @Inject(PG_POOL) private readonly pool: Pool,
    private readonly config: CheckoutConfig,
  ) {}

  /**
   * Before any new attempt: the purchase status by this attempt's key. Explicit `confirmed` or
   * `landed_with_error` decides the order; explicit `expired` (or no purchase by that key) allows attempt n+1;
   * anything else (empty, unknown, still processing) decides nothing and is asked again later.
   */
  async lookup(order: OrderEntity): StepResult {
    const key = order.upstreamIdempotencyKey ?? upstreamKeyOf(this.transactions, order);
    crashPoint('before_purchase_status');
    let verdict;
    try {
      verdict = await this.purchaseByKey(order, key);
    } catch (error) {
      return this.commits.retryLater(order, error);
    }
    crashPoint('after_purchase_status');
    if (verdict === 'pending' || verdict === 'unknown')
      return this.commits.retryLater(order, new Error(`purchase status says nothing final (${verdict})`));
    if (verdict === 'confirmed' || verdict === 'landed_with_error')
      return this.commits.landed(order, verdict, 'The ledger refused the purchase');
    // expired, or no purchase was ever made with this key: the attempt can no longer land.
    if (order.attempt >= this.config.CHECKOUT_MAX_ATTEMPTS)
      return this.commits.finish(
        order,
        'failed',
        'ATTEMPTS_EXHAUSTED',
        `No attempt of ${order.attempt} reached the ledger in time`,
      );
    return this.commits.commit(
      order,
      'new_attempt',
      {
        state: 'expired',
        recoveryPoint: 'revalidate',
        attempt: order.attempt + 1,
        previousAttempts: [
          ...order.previousAttempts,
          {
            attempt: order.attempt,
            upstream_idempotency_key: key,
            custodial_transaction_id: order.custodialTransactionId,
            transaction_signature: order.transactionSignature,
            upstream_status: order.upstreamStatus ?? 'expired',
          },
        ],
        batch: null,
        upstreamIdempotencyKey: null,
        transactionRecordId: null,
        custodialTransactionId: null,
        transactionSignature: null,
        upstreamStatus: null,
      },
      `purchase status: ${verdict}`,
      'new_attempt',
    );
  }

  /**
   * The upstream's purchase status by the attempt's key (`none`: no purchase was ever made with it). Throws what
   * the call threw when it says nothing (unavailable, timed out, an unknown outcome).
   */
  async purchaseByKey(
    order: OrderEntity,
    key: string = order.upstreamIdempotencyKey ?? upstreamKeyOf(this.transactions, order),
  ): Promise<PurchaseVerdict | 'none'> {
    try {
      return interpretPurchaseStatus(
        await this.upstream.getPurchaseStatus(key, { requestId: order.requestId ?? undefined }),
        key,
      );
    } catch (error) {
      if (error instanceof UpstreamError && error.code === 'NOT_FOUND' && !error.outcomeUnknown)
        return 'none';
      throw error;
    }
  }

  /** After `confirmed`: the event refreshed in the mirror, so the listing leaves it (the order stays confirmed). */
  async refresh(order: OrderEntity): StepResult {
    crashPoint('before_refresh');
    let releasePermit: () => void;
    try {
      releasePermit = await this.refreshPermits().acquire(
        this.config.CHECKOUT_LEASE_MS / 2,
        () => new Error('no mirror refresh slot free'),
      );
    } catch {
      // Busy with other refreshes: due again after a poll, not counted as a failed try.
      return this.commits.handBack(order, this.config.CHECKOUT_TRACK_POLL_MS);
    }
    try {
      // A pass that ran but did not complete (failed on an upstream read) refreshed nothing: tried again.
      const pass = await this.catalog.refreshEvent(order.eventId);
      if (pass.status !== 'completed')
        throw new Error(
          `mirror refresh pass ${pass.id} ended ${pass.status}${pass.error ? `: ${pass.error}` : ''}`,
        );
    } catch (error) {
      releasePermit();
      if (order.stepFailures + 1 < MAX_REFRESH_TRIES) return this.commits.retryLater(order, error);
      return this.commits.commit(
        order,
        'final',
        { recoveryPoint: 'done' },
        `mirror refresh abandoned: ${describeError(error)}`,
        'mirror_refresh_abandoned',
      );
    }
    releasePermit();
    crashPoint('after_refresh');
    return this.commits.commit(order, 'final', { recoveryPoint: 'done' }, null, 'mirror_refreshed');
  }

  /** At most a quarter of the pool's background share in refreshes at once (each may hold two connections). */
  private refreshPermits(): Semaphore {
    const background = poolGateOf(this.pool)?.background ?? this.config.CHECKOUT_WORKER_BATCH;
    this.refreshes ??= new Semaphore(Math.max(1, Math.floor(background / 4)));
    return this.refreshes;
  }
}
