// One piece: one attempt of an order up to its first submission (recovery points revalidate, sign and submit);
// the steps hand one another the order, the revalidated patch and the drive context, and a crash may resume at
// any of them, so they read together. The other steps of a purchase live in checkout.driver.ts and beside it.
import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { CheckoutConfig } from '../config/checkout.config';
import { DatabaseClock } from '../database/database-clock';
import { budgetExhausted } from '../durable-work/backoff.policy';
import { LeaseLostError } from '../durable-work/lease.sql';
import { TransactionsService, type LedgerRecord, type SignInput } from '../transactions/transactions.service';
import { transactionKey, upstreamKeyOf, type DriveContext, type StepResult } from './checkout.context';
import {
  CheckoutLedgerHooks,
  REVALIDATED_STEP,
  SIGNED_STEP,
  signedPatch,
  type LedgerCall,
} from './checkout.ledger-hooks';
import { batchFromWire, CheckoutIntegrator, type Revalidation } from './checkout.integrator';
import { crashPoint } from './crash-points';
import { describeError, OrderCommitter } from './order.committer';
import type { OrderEntity } from './order.entity';
import type { OrderPatch } from './order.repository';
import { OrderSettlement } from './order.settlement';
import { OrderTracker } from './order.tracker';

/**
 * One attempt of an order up to its first submission: the live revalidation, the signing of `accept_offer_v2`
 * through the buyer's wallet with the attempt's derived key, and the first send of the signed bytes (the
 * recovery points `revalidate`, `sign` and `submit`).
 */
@Injectable()
export class OrderAttempt {
  constructor(
    private readonly commits: OrderCommitter,
    private readonly tracker: OrderTracker,
    private readonly transactions: TransactionsService,
    private readonly integrator: CheckoutIntegrator,
    private readonly settlement: OrderSettlement,
    private readonly config: CheckoutConfig,
    private readonly clock: DatabaseClock,
    private readonly hooks: CheckoutLedgerHooks,
  ) {}

  async revalidate(order: OrderEntity, ctx: DriveContext): StepResult {
    crashPoint('before_revalidate');
    // The read started with the POST serves attempt 1's first revalidation only; any later one reads anew.
    const prefetched = order.attempt === 1 ? ctx.revalidation : undefined;
    ctx.revalidation = undefined;
    let outcome: Revalidation;
    try {
      if (prefetched) {
        const settled = await prefetched;
        if ('error' in settled) throw settled.error;
        outcome = settled.value;
      } else
        outcome =
          (await this.resumedAttempt(order)) ??
          (await this.integrator.revalidate({
            eventId: order.eventId,
            ticketId: order.ticketId,
            expectedPriceMinor: order.expectedPriceMinor,
            buyerAddress: order.buyerAddress,
            requestId: order.requestId,
          }));
    } catch (error) {
      return this.uncheckable(order, error);
    }
    crashPoint('after_revalidate');
    if (outcome.kind !== 'ok') {
      // Before any rejection: did this attempt's key already buy? The listing is gone, or its price moved, because
      // of this very purchase when the order is a client's retry after its first row was lost (a restore, a
      // failover): the keys are the lost attempt's (they derive from the client's key), and the upstream knows.
      let earlier;
      try {
        earlier = await this.settlement.purchaseByKey(order, upstreamKeyOf(this.transactions, order));
      } catch (error) {
        return this.uncheckable(order, error);
      }
      if (earlier === 'confirmed' || earlier === 'landed_with_error')
        return this.commits.landed(order, earlier, 'The ledger refused the purchase');
      if (earlier === 'pending' || earlier === 'unknown')
        return this.commits.retryLater(order, new Error(`a purchase by this attempt's key is ${earlier}`));
    }
    if (outcome.kind === 'gone')
      return this.commits.finish(order, 'rejected', 'LISTING_GONE', 'The listing is no longer active');
    if (outcome.kind === 'restricted')
      return this.commits.finish(
        order,
        'rejected',
        'LISTING_RESTRICTED',
        'The listing is reserved for another buyer',
      );
    if (outcome.kind === 'price_changed')
      return this.commits.finish(
        order,
        'rejected',
        'PRICE_CHANGED',
        `The price changed from ${order.expectedPriceMinor} to ${outcome.currentPriceMinor} (minor units)`,
        { currentPriceMinor: outcome.currentPriceMinor },
      );
    return this.signAndSubmit(
      order,
      {
        state: 'signing',
        recoveryPoint: 'sign',
        batch: outcome.batch,
        stablecoinDecimals: outcome.decimals,
        upstreamIdempotencyKey: upstreamKeyOf(this.transactions, order),
      },
      ctx,
    );
  }

  /**
   * The revalidation an interrupted attempt already made: when the ledger has this attempt's transaction (its
   * record, with key and batch, is written before signing and may have landed while the order's commit did
   * not), the attempt continues with that batch; a new live read could build a different batch for the same
   * key. Null when the attempt never reached the ledger.
   */
  private async resumedAttempt(order: OrderEntity): Promise<Revalidation | null> {
    const found = await this.transactions.findByKey(order.clientId, transactionKey(order));
    if (!found) return null;
    const { batch } = found;
    if (batch?.instruction !== 'accept_offer_v2')
      throw new Error('the ledger transaction of this attempt is not a purchase');
    const decimals = await this.integrator.decimals();
    if (decimals === null) throw new Error('the protocol config is unavailable');
    return { kind: 'ok', batch, decimals };
  }

  /**
   * An attempt's signing and first submission right after its revalidation, with no order commit before them:
   * the order's key was committed with the order, and the ledger commits its record of the attempt (key and
   * batch) before its signing call, then sends the signed bytes at once. The order commits the revalidation,
   * the signature and the first answer in one statement, alongside the ledger's record of that answer. A crash
   * before it: recovery finds the attempt in the ledger (`resumedAttempt`) and goes on with the same key, the
   * same batch and the same bytes.
   */
  private async signAndSubmit(order: OrderEntity, revalidated: OrderPatch, ctx: DriveContext): StepResult {
    crashPoint('before_sign');
    const call: LedgerCall = { order, revalidated };
    let result;
    try {
      result = await this.transactions.signAndSend(
        {
          ...this.signInput({
            id: order.id,
            clientId: order.clientId,
            idempotencyKey: order.idempotencyKey,
            attemptKeys: order.attemptKeys,
            attempt: order.attempt,
            buyerSubject: order.buyerSubject,
            requestId: order.requestId,
            batch: revalidated.batch ?? null,
            upstreamIdempotencyKey: revalidated.upstreamIdempotencyKey ?? null,
            leaseToken: order.leaseToken,
            heldSince: order.heldSince,
          }),
          // The key is the order's (committed with it): signing need not wait for the ledger's commit, while this
          // drive's lease is provably young (less than half of it gone by this process's clock since the
          // statement that took or renewed it was sent). A drive resumed after a long stall inserts first: the
          // insert is fenced by its token, so a drive whose order was claimed again signs nothing.
          signAlongsideInsert: performance.now() - order.heldSince < this.config.CHECKOUT_LEASE_MS / 2,
        },
        // The crash points around the first send, and the order's commit alongside the ledger's record of the
        // first answer (`call.committed`): CheckoutLedgerHooks.
        { hooks: this.hooks, call },
      );
    } catch (error) {
      // The order was claimed again before this attempt bound its batch to the key: the new holder decides.
      if (error instanceof LeaseLostError) return null;
      // Signing failed, or recording its signature did (the bytes may then have left: the `sign` step signs
      // again with the same key and sends the same bytes). The revalidation is committed, then the error decides;
      // a key that holds another request goes to `lookup` in the same commit.
      const held = keyHoldsAnotherRequest(error);
      const at = await this.commits.commit(
        order,
        ['revalidated', 'signing'],
        held ? { ...revalidated, recoveryPoint: 'lookup' } : revalidated,
        held ? describeError(error) : null,
        [REVALIDATED_STEP, { step: 'signing' }],
      );
      if (!at || held) return at;
      if (error instanceof AppError && error.code === 'UPSTREAM_REJECTED')
        return this.commits.finish(at, 'failed', 'SIGNING_REJECTED', error.message);
      return this.commits.retryLater(at, error);
    }
    const { record, sent } = result;
    ctx.record = record;
    if (call.committed !== undefined) {
      const committed = await call.committed;
      if (!committed) return null;
      // Answered and committed, then the ledger's record of the answer failed: tracked on from `track` later.
      if ('error' in sent)
        return this.tracker.onSendFailed(committed, sent.error, { recoveryPoint: 'lookup' });
      this.tracker.answered(ctx, sent);
      return sent.record.finalAt ? this.tracker.onLedgerStatus(committed, sent.record) : committed;
    }
    // No answer recorded (refused, unknown, or a replayed signature sent without news): the signature first.
    const signed = await this.commits.commit(
      order,
      ['revalidated', 'signing', 'signed'],
      { ...revalidated, ...signedPatch(record), state: 'signed', recoveryPoint: 'submit' },
      null,
      [REVALIDATED_STEP, { step: 'signing' }, SIGNED_STEP],
    );
    return signed && this.tracker.afterSubmission(signed, sent, ctx);
  }

  /** The `sign` recovery point: deferred or interrupted signing, then the first submission. */
  async sign(order: OrderEntity, ctx: DriveContext): StepResult {
    let current: OrderEntity | null = order;
    if (order.state !== 'signing') {
      current = await this.commits.commit(order, 'signing', {
        state: 'signing',
        upstreamIdempotencyKey: upstreamKeyOf(this.transactions, order),
      });
      if (!current) return null;
    }
    crashPoint('before_sign');
    const signing: OrderEntity = current;
    let record: LedgerRecord;
    try {
      ({ record } = await this.transactions.sign(this.signInput(signing)));
    } catch (error) {
      if (error instanceof LeaseLostError) return null;
      if (keyHoldsAnotherRequest(error))
        return this.commits.commit(signing, 'signing', { recoveryPoint: 'lookup' }, describeError(error));
      // A definite refusal (4xx) means nothing was signed; anything else: same key again later.
      if (error instanceof AppError && error.code === 'UPSTREAM_REJECTED')
        return this.commits.finish(signing, 'failed', 'SIGNING_REJECTED', error.message);
      return this.commits.retryLater(signing, error);
    }
    crashPoint('after_sign');
    ctx.record = record;
    // The order's `signed` commit runs alongside the first submission. Safe: the order and its upstream key were
    // committed before signing and the ledger holds the signed bytes (marked submitted in the statement that
    // recorded them); if this process dies before the commit lands, recovery signs again with the same key
    // (the upstream returns the same transaction) and re-sends the same bytes.
    const [committed, sent] = await Promise.all([
      this.commits.commit(signing, 'signed', {
        ...signedPatch(record),
        state: 'signed',
        recoveryPoint: 'submit',
      }),
      this.tracker.send(signing, record),
    ]);
    return committed && this.tracker.afterSubmission(committed, sent, ctx);
  }

  /**
   * The listing (or whether this attempt already bought) could not be checked: tried again later, or, once the
   * give-up time since the attempt began has passed, the order fails UPSTREAM_UNAVAILABLE. attempt_started_at is
   * the database's clock; so is the "now" it is compared with (one clock).
   */
  private uncheckable(order: OrderEntity, error: unknown): StepResult {
    if (
      budgetExhausted(
        order.attemptStartedAt.getTime(),
        this.config.CHECKOUT_REVALIDATE_GIVE_UP_MS,
        this.clock.nowMs(),
      )
    )
      return this.commits.finish(
        order,
        'failed',
        'UPSTREAM_UNAVAILABLE',
        `The listing could not be checked: ${describeError(error)}`,
      );
    return this.commits.retryLater(order, error);
  }

  /** The `submit` recovery point: the stored bytes sent (signed again with the same key if the ledger lags). */
  async submit(order: OrderEntity, ctx: DriveContext): StepResult {
    let stored = ctx.record ?? (await this.tracker.ledgerRecord(order));
    if (stored.phase === 'signing') {
      // The order's `signed` commit landed, the ledger's did not (a crash between them): sign again with the
      // same key, which returns the same transaction.
      try {
        ({ record: stored } = await this.transactions.sign(this.signInput(order)));
      } catch (error) {
        if (error instanceof LeaseLostError) return null;
        return this.commits.retryLater(order, error);
      }
    }
    return this.tracker.afterSubmission(order, await this.tracker.send(order, stored), ctx);
  }

  /** The signing request of the order's current attempt (the same on every retry: same key, same batch). */
  private signInput(
    order: Pick<
      OrderEntity,
      | 'id'
      | 'clientId'
      | 'idempotencyKey'
      | 'attemptKeys'
      | 'attempt'
      | 'batch'
      | 'upstreamIdempotencyKey'
      | 'buyerSubject'
      | 'requestId'
      | 'leaseToken'
      | 'heldSince'
    >,
  ): SignInput {
    if (!order.batch) throw new Error('order in signing without a batch');
    return {
      clientId: order.clientId,
      idempotencyKey: transactionKey(order),
      upstreamIdempotencyKey: order.upstreamIdempotencyKey ?? upstreamKeyOf(this.transactions, order),
      kind: 'user',
      subject: order.buyerSubject,
      batch: batchFromWire(order.batch),
      requestId: order.requestId ?? undefined,
      onFinal: this.hooks.finalHandler,
      // The ledger's row names the order: its after-final handler finds the order by it (CheckoutLedgerHooks).
      orderId: order.id,
      // Submitted right after: the ledger marks the submission in the statement recording the signature.
      submitNextFollowUpMs: this.config.CHECKOUT_LEASE_MS,
      // The ledger binds this attempt's batch to its key only while this drive's claim of the order is current,
      // and no signing (or first submission) attempt starts past the claim's lease (retries included).
      fence: this.commits.fence(order),
    };
  }
}

/**
 * The upstream refused signing with 409: this attempt's key already holds another request. Possible after a
 * crash between the signing call and the ledger's record of it (the call leaves alongside the record's insert)
 * when the listing changed before the attempt was resumed, so its new live read built another batch. Not a
 * failure of the purchase: what decides is whatever that key signed, so the attempt goes to `lookup` (the
 * purchase status by key: confirmed, landed with error, or expired → attempt n+1 with a new key).
 */
function keyHoldsAnotherRequest(error: unknown): boolean {
  return (
    error instanceof AppError &&
    error.code === 'UPSTREAM_REJECTED' &&
    (error.details as { upstreamStatus?: unknown } | undefined)?.upstreamStatus === 409
  );
}
