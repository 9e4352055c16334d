import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { CheckoutConfig } from '../config/checkout.config';
import {
  TransactionsService,
  type FinalAnswer,
  type LedgerAttemptHooks,
  type LedgerRecord,
} from '../transactions/transactions.service';
import type { SubmissionResult } from '../upstream/upstream.types';
import { attemptOfKey, transactionKey, type AttemptOfKey, type StepResult } from './checkout.context';
import { crashPoint } from './crash-points';
import { OrderCommitter } from './order.committer';
import type { OrderEntity } from './order.entity';
import { OrderRepository, type AuditStep, type OrderPatch } from './order.repository';

/** After-final handler name the order's ledger transactions carry: wakes the order at once. */
export const CHECKOUT_ON_FINAL = 'checkout.order';

/** One call into the ledger by a drive: the order it is for, and what the hooks leave for the drive. */
export interface LedgerCall {
  order: OrderEntity;
  /** signAndSend only: the revalidation committed with the signature and the first answer. */
  revalidated?: OrderPatch;
  /** The order's commit a hook started alongside the ledger's record of an answer (the drive awaits it). */
  committed?: StepResult;
  /** The upstream answered (crash point `after_submit` passed). */
  answered?: boolean;
}

/** Audit rows of a combined commit: the state and recovery point each step stood for. */
export const REVALIDATED_STEP: AuditStep = {
  step: 'revalidated',
  state: 'revalidated',
  recoveryPoint: 'sign',
};
export const SIGNED_STEP: AuditStep = { step: 'signed', state: 'signed', recoveryPoint: 'submit' };

/** The order's record of its signed transaction. */
export function signedPatch(record: LedgerRecord): OrderPatch {
  return {
    transactionRecordId: record.id,
    custodialTransactionId: record.custodialTransactionId,
    // The ledger's id of a transaction is its first signature, the fee payer's.
    transactionSignature: record.feePayerSignature,
  };
}

/**
 * Everything the ledger (transactions/) calls back into checkout with, in one place: the crash points around the
 * first send, the order's commits that run alongside the ledger's record of an answer, and the after-final
 * handler that wakes (or reopens) the order. The only implementation of LedgerAttemptHooks.
 */
@Injectable()
export class CheckoutLedgerHooks implements LedgerAttemptHooks<LedgerCall>, OnModuleInit {
  readonly finalHandler = CHECKOUT_ON_FINAL;
  private readonly logger = new Logger('CheckoutService');

  constructor(
    private readonly commits: OrderCommitter,
    private readonly repo: OrderRepository,
    private readonly transactions: TransactionsService,
    private readonly config: CheckoutConfig,
  ) {}

  /**
   * How an order is woken (CheckoutDriver.wake; the driver sets it when built): the driver's steps use these
   * hooks, so the hooks cannot take the driver as a dependency. Until set, a woken order waits for the worker.
   */
  private wake: (orderId: string) => unknown = () => undefined;

  /** Called once by CheckoutDriver's constructor. */
  wakeOrdersWith(wake: (orderId: string) => unknown): void {
    this.wake = wake;
  }

  onModuleInit(): void {
    this.transactions.registerHooks(this);
  }

  signed(): void {
    crashPoint('after_sign');
    crashPoint('before_submit');
  }

  /** The first answer: the revalidation, the signature and the answer in one order commit. */
  alongsideAnswer(call: LedgerCall, record: LedgerRecord, answer: SubmissionResult): Promise<unknown> {
    this.answered(call);
    call.committed = this.commits.commit(
      call.order,
      ['revalidated', 'signing', 'signed', 'submitted'],
      {
        ...call.revalidated,
        ...signedPatch(record),
        state: 'submitted',
        recoveryPoint: 'track',
        upstreamStatus: answer.status,
      },
      null,
      [REVALIDATED_STEP, { step: 'signing' }, SIGNED_STEP, { step: 'submitted' }],
    );
    return call.committed;
  }

  /** A final answer while tracking: the order's final commit (one round trip with the ledger's). */
  alongsideFinal(call: LedgerCall, answer: FinalAnswer): Promise<unknown> {
    this.answered(call);
    call.committed = this.onLedgerStatus(call.order, answer);
    return call.committed;
  }

  /** Crash point `after_submit`, once per call: the upstream answered. */
  answered(call: LedgerCall): void {
    if (call.answered) return;
    call.answered = true;
    crashPoint('after_submit');
  }

  /** A final submission status: only `confirmed` completes an order. */
  onLedgerStatus(order: OrderEntity, record: Pick<LedgerRecord, 'status' | 'failureReason'>): StepResult {
    const status = record.status;
    if (status === 'confirmed' || status === 'landed_with_error')
      return this.commits.landed(order, status, record.failureReason ?? 'landed with error');
    if (status === 'expired')
      return this.commits.commit(order, 'expired', {
        state: 'expired',
        recoveryPoint: 'lookup',
        upstreamStatus: 'expired',
      });
    return this.commits.handBack(order, this.config.CHECKOUT_TRACK_POLL_MS);
  }

  /** A ledger transaction of an order became final: resume that order now instead of at its next poll. */
  async afterFinal(record: LedgerRecord): Promise<void> {
    const orderId = await this.repo.wakeByTransactionRecord(record.id);
    if (orderId) this.wake(orderId);
    // A purchase that landed for an order already closed otherwise (a stale drive's submission of an attempt
    // the order never recorded, after another drive gave up on it): the order is reopened at `lookup`, and
    // the purchase status by that attempt's key confirms it. Never left failed with the buyer owning the ticket.
    if (orderId || record.status !== 'confirmed') return;
    const attempt = await this.attemptOf(record);
    if (!attempt) return;
    const reopened = await this.repo.reopenLanded(record.clientId, attempt, record);
    if (reopened) {
      this.logger.warn(
        { orderId: reopened, attempt: attempt.attempt, transactionId: record.id },
        'checkout order reopened: a transaction of its attempt landed after the order was closed',
      );
      this.wake(reopened);
    }
  }

  /**
   * The order and attempt a ledger transaction is for: the order the ledger names for it (`order_id`, on the
   * record or read by `orderIdOf`), the attempt whose derived key is the transaction's. Transactions without one
   * (written before `ledger_transaction_orders`: attempts in flight across the upgrade) fall back to parsing the
   * key (`attemptOfKey`); drop that once none is left unfinished.
   */
  private async attemptOf(record: LedgerRecord): Promise<AttemptOfKey | null> {
    const orderId = record.orderId ?? (await this.transactions.orderIdOf(record.id));
    if (orderId === null) return attemptOfKey(record.idempotencyKey);
    const order = await this.repo.findById(orderId);
    if (!order || order.clientId !== record.clientId) return null;
    const last = Math.max(order.attempt, this.config.CHECKOUT_MAX_ATTEMPTS);
    for (let attempt = 1; attempt <= last; attempt++)
      if (
        transactionKey({
          id: order.id,
          idempotencyKey: order.idempotencyKey,
          attemptKeys: order.attemptKeys,
          attempt,
        }) === record.idempotencyKey
      )
        return { orderId: order.id, attempt };
    return null;
  }
}
