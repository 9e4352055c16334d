import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { CheckoutConfig } from '../config/checkout.config';
import { LeaseLostError } from '../durable-work/lease.sql';
import { TransactionsService, type LedgerRecord } from '../transactions/transactions.service';
import type { DriveContext, Sent, StepResult } from './checkout.context';
import { CheckoutLedgerHooks, type LedgerCall } from './checkout.ledger-hooks';
import { crashPoint } from './crash-points';
import { OrderCommitter } from './order.committer';
import type { OrderEntity } from './order.entity';
import type { OrderPatch } from './order.repository';

/** Status polls one drive makes before handing the order back (a safety bound; time bounds it first). */
export const MAX_POLLS_PER_DRIVE = 100_000;

/**
 * An order's submissions and its tracking to a final status: sends the signed bytes through the ledger (safe to
 * repeat), polls in process at the client's cadence, and turns the ledger's final status into the order's.
 * On shutdown the polls stop at once and their orders are handed back (any replica's worker continues them).
 */
@Injectable()
export class OrderTracker implements OnModuleDestroy {
  /** Orders being polled in process right now (capped by CHECKOUT_WORKER_BATCH). */
  private tracking = 0;
  private readonly shutdown = new AbortController();
  private readonly stopping = this.shutdown.signal;

  constructor(
    private readonly commits: OrderCommitter,
    private readonly transactions: TransactionsService,
    private readonly config: CheckoutConfig,
    private readonly hooks: CheckoutLedgerHooks,
  ) {}

  onModuleDestroy(): void {
    this.shutdown.abort();
  }

  /**
   * Sends the signed bytes through the ledger (safe to repeat), crash points around it; the ledger's record after
   * it, or the error (never throws it: the caller decides with `onSendFailed`, passing its own refusal patch).
   * With `call`, the order's final commit runs alongside the ledger's record of a final answer (`call.committed`,
   * CheckoutLedgerHooks.alongsideFinal).
   */
  async send(order: OrderEntity, stored: LedgerRecord, call?: LedgerCall): Promise<Sent> {
    crashPoint('before_submit');
    const own: LedgerCall = call ?? { order };
    try {
      const { record, answeredAt } = await this.transactions.send(
        stored,
        {
          requestId: order.requestId ?? undefined,
          followUpMs: this.config.CHECKOUT_LEASE_MS,
          // A first submission is marked (and sent) only while this drive's claim is current.
          fence: this.commits.fence(order),
        },
        call && { hooks: this.hooks, call },
      );
      this.hooks.answered(own);
      return { record, answeredAt };
    } catch (error) {
      return { error };
    }
  }

  /**
   * A failed send: refused (4xx) → these bytes will never land, the purchase status decides (`lookup`, committed
   * with the caller's `onRefused`); anything else → the same bytes again later.
   */
  onSendFailed(order: OrderEntity, error: unknown, onRefused: OrderPatch): StepResult {
    // The order was claimed again (this drive stalled past its lease): nothing was sent; the new holder goes on.
    if (error instanceof LeaseLostError) return Promise.resolve(null);
    if (error instanceof AppError && error.code === 'UPSTREAM_REJECTED')
      return this.commits.commit(order, 'submitted', onRefused, error.message);
    return this.commits.retryLater(order, error);
  }

  /** Commits the first submission's outcome on the order (at `signed`): tracked on, or looked up if refused. */
  async afterSubmission(order: OrderEntity, sent: Sent, ctx: DriveContext): StepResult {
    if ('error' in sent)
      return this.onSendFailed(order, sent.error, { state: 'submitted', recoveryPoint: 'lookup' });
    const { record } = sent;
    this.answered(ctx, sent);
    const committed = await this.commits.commit(order, 'submitted', {
      state: 'submitted',
      recoveryPoint: 'track',
      upstreamStatus: record.status,
    });
    return committed && (record.finalAt ? this.onLedgerStatus(committed, record) : committed);
  }

  /**
   * Carries an answer of a send to the drive's next step: the ledger's record after it, and the next poll one
   * CHECKOUT_TRACK_POLL_MS after the answer arrived (as any client polling), not after its records.
   */
  answered(ctx: DriveContext, sent: { record: LedgerRecord; answeredAt?: number }): void {
    ctx.record = sent.record;
    ctx.nextPollAt = (sent.answeredAt ?? Date.now()) + this.config.CHECKOUT_TRACK_POLL_MS;
  }

  /**
   * Polls the status in process: re-sends the same bytes (safe) every CHECKOUT_TRACK_POLL_MS after the previous
   * answer and finalizes as soon as the upstream says final. Bounded by half a lease (the last commit renewed
   * it): then the order is handed back, due at once, for the worker of any replica to continue.
   */
  async track(order: OrderEntity, ctx: DriveContext): StepResult {
    const record = ctx.record ?? (await this.ledgerRecord(order));
    const poll = this.config.CHECKOUT_TRACK_POLL_MS;
    const handBackAt = Date.now() + Math.max(poll, this.config.CHECKOUT_LEASE_MS / 2);
    // At most CHECKOUT_WORKER_BATCH orders are polled in process per replica (bounded load under a burst);
    // beyond that an order is polled once per claim and handed back to the worker, due again after a poll.
    const slot = this.tracking < this.config.CHECKOUT_WORKER_BATCH;
    if (slot) this.tracking++;
    try {
      return await this.pollLedger(order, ctx, record, handBackAt, slot ? MAX_POLLS_PER_DRIVE : 1);
    } finally {
      if (slot) this.tracking--;
    }
  }

  private async pollLedger(
    order: OrderEntity,
    ctx: DriveContext,
    start: LedgerRecord,
    handBackAt: number,
    maxPolls: number,
  ): StepResult {
    let record = start;
    const poll = this.config.CHECKOUT_TRACK_POLL_MS;
    for (let polls = 0; polls < maxPolls; polls++) {
      if (record.finalAt) return this.onLedgerStatus(order, record);
      const wait = Math.max(0, ctx.nextPollAt - Date.now());
      if (Date.now() + wait >= handBackAt || this.stopping.aborted) break;
      if (wait > 0) await sleep(wait, undefined, { signal: this.stopping }).catch(() => undefined);
      if (this.stopping.aborted) break;
      // A final answer: the order's final commit runs alongside the ledger's record of it (one round trip).
      const call: LedgerCall = { order };
      const sent = await this.send(order, record, call);
      const finished = call.committed;
      if ('error' in sent) {
        if (finished) await finished.catch(() => undefined);
        return this.onSendFailed(order, sent.error, { recoveryPoint: 'lookup' });
      }
      if (finished) return finished;
      record = sent.record;
      this.answered(ctx, sent);
    }
    if (record.finalAt) return this.onLedgerStatus(order, record);
    return this.commits.handBack(order, maxPolls === 1 ? poll : 0);
  }

  /** The order's ledger transaction, read back (a drive that did not carry it from an earlier step). */
  async ledgerRecord(order: OrderEntity): Promise<LedgerRecord> {
    const [stored] = await this.transactions.findByIds(
      order.transactionRecordId ? [order.transactionRecordId] : [],
    );
    if (!stored) throw new Error('order without its ledger transaction');
    return stored;
  }

  /** A final submission status: only `confirmed` completes an order (CheckoutLedgerHooks.onLedgerStatus). */
  onLedgerStatus(order: OrderEntity, record: Pick<LedgerRecord, 'status' | 'failureReason'>): StepResult {
    return this.hooks.onLedgerStatus(order, record);
  }
}
