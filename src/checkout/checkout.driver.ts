import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { inBackground, poolGateOf, Semaphore } from '../database/pool-gate';
import { CatalogSyncService } from '../catalog-sync/catalog-sync.service';
import { AppError } from '../common/app-error';
import { CheckoutConfig } from '../config/checkout.config';
import { TransactionsService } from '../transactions/transactions.service';
import { UpstreamClient } from '../upstream/upstream.client';
import { UpstreamError } from '../upstream/upstream.error';
import { batchFromWire, CheckoutIntegrator, type Revalidation } from './checkout.integrator';
import { CheckoutMetrics } from './checkout.metrics';
import type { OrderFailureCode } from './checkout.errors';
import { armCrashPoints, crashPoint, type CrashPointName } from './crash-points';
import { FINAL_ORDER_STATES, type OrderEntity, type OrderState } from './order.entity';
import { OrderRepository, type AuditStep, type OrderPatch } from './order.repository';
import { interpretPurchaseStatus } from './purchase-status';

/** After-final handler name the order's ledger transactions carry: wakes the order at once. */
export const CHECKOUT_ON_FINAL = 'checkout.order';

/** Steps one drive runs before handing the order back (a safety bound; a purchase needs about six). */
const MAX_STEPS_PER_DRIVE = 16;
/** Refresh of the mirror after a confirmed order: tries before giving up on it (the order stays confirmed). */
const MAX_REFRESH_TRIES = 5;
/** Status polls one drive makes before handing the order back (a safety bound; time bounds it first). */
const MAX_POLLS_PER_DRIVE = 100_000;

type TxRecord = Awaited<ReturnType<TransactionsService['sign']>>['record'];
type CommitName = 'revalidated' | 'signing' | 'signed' | 'submitted' | 'expired' | 'new_attempt' | 'final';

/** A live revalidation started before the order was committed (checkout.service.ts): its result or error. */
export type PrefetchedRevalidation = { value: Revalidation } | { error: unknown };

/** What one send of the signed bytes gave: the ledger's record after the answer, or the error. */
type Sent = { record: TxRecord; answeredAt?: number } | { error: unknown };

/** What one drive carries from step to step in memory (never needed after a crash: the rows say it all). */
interface DriveContext {
  /** The order's ledger transaction as the last step left it (saves re-reading it). */
  record: TxRecord | null;
  /** When to re-send for the status next: POLL after the previous answer, like any client polling. */
  nextPollAt: number;
  /** Attempt 1's live read, started alongside the order's insert; used once, by the first revalidate step. */
  revalidation?: Promise<PrefetchedRevalidation>;
}

/**
 * The checkout state machine (docs/checkout.md). A driver holds an order by lease and runs its steps from the
 * recovery point; every step commits (fenced by lease owner, state and attempt) before the next upstream call,
 * so any replica can resume after a crash. A step whose upstream outcome is unknown hands the order back with
 * a backoff and is repeated idempotently: the same derived key for signing, the same bytes for submission,
 * and a purchase-status lookup before any new attempt.
 */
@Injectable()
export class CheckoutDriver implements OnModuleDestroy {
  readonly instanceId = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly repo: OrderRepository;
  private readonly logger = new Logger('Checkout');
  /** Drives in progress on this replica (awaited on shutdown). */
  private readonly active = new Set<Promise<void>>();
  private readonly stopping = new AbortController();
  /** Orders being polled in process right now (capped by CHECKOUT_WORKER_BATCH). */
  private tracking = 0;
  /**
   * Mirror refreshes running on this replica. A refresh holds a pooled connection for its whole pass and takes
   * a second one while it finishes, so unbounded they could hold every background connection at once, each
   * waiting for one more (the pool ran dry under a burst of confirmations). Sized on first use (the pool gate
   * is installed after the providers are built).
   */
  private refreshes: Semaphore | null = null;

  constructor(
    private readonly dataSource: DataSource,
    private readonly config: CheckoutConfig,
    private readonly transactions: TransactionsService,
    private readonly upstream: UpstreamClient,
    private readonly integrator: CheckoutIntegrator,
    private readonly catalog: CatalogSyncService,
    private readonly metrics: CheckoutMetrics,
  ) {
    this.repo = new OrderRepository(dataSource);
    armCrashPoints(config.CHECKOUT_CRASH_POINTS, config.crashPointsAllowed);
    metrics.registerGauges(() => this.repo.gauges());
  }

  /** Upstream idempotency key of an attempt: derived from (order, attempt), so every retry reuses it. */
  upstreamKey(order: Pick<OrderEntity, 'id' | 'clientId' | 'attempt'>): string {
    return this.transactions.upstreamKeyFor(order.clientId, this.transactionKey(order));
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
      if (current) await this.repo.release(current.id, this.instanceId, 0, null);
    } catch (error) {
      this.logger.error({ err: error, orderId: order.id }, 'checkout step crashed');
      const message = error instanceof Error ? error.message : 'step failed';
      await this.repo
        .release(order.id, this.instanceId, this.backoff(current ?? order), `INTERNAL: ${message}`)
        .catch(() => undefined);
    }
  }

  /** One step from the recovery point: the committed order to continue with, or null (handed back/fenced). */
  private step(order: OrderEntity, ctx: DriveContext): Promise<OrderEntity | null> {
    const steps: Record<OrderEntity['recoveryPoint'], (o: OrderEntity) => Promise<OrderEntity | null>> = {
      revalidate: (o) => this.revalidate(o, ctx),
      sign: (o) => this.sign(o, ctx),
      submit: (o) => this.submit(o, ctx),
      track: (o) => this.track(o, ctx),
      lookup: (o) => this.lookup(o),
      refresh: (o) => this.refresh(o),
      done: () => Promise.resolve(null),
    };
    return steps[order.recoveryPoint](order);
  }

  private async revalidate(order: OrderEntity, ctx: DriveContext): Promise<OrderEntity | null> {
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
      const age = Date.now() - order.attemptStartedAt.getTime();
      if (age > this.config.CHECKOUT_REVALIDATE_GIVE_UP_MS)
        return this.finish(
          order,
          'failed',
          'UPSTREAM_UNAVAILABLE',
          `The listing could not be checked: ${describe(error)}`,
        );
      return this.retryLater(order, error);
    }
    crashPoint('after_revalidate');
    if (outcome.kind === 'gone')
      return this.finish(order, 'rejected', 'LISTING_GONE', 'The listing is no longer active');
    if (outcome.kind === 'restricted')
      return this.finish(
        order,
        'rejected',
        'LISTING_RESTRICTED',
        'The listing is reserved for another buyer',
      );
    if (outcome.kind === 'price_changed')
      return this.finish(
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
        upstreamIdempotencyKey: this.upstreamKey(order),
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
    const record = await this.transactions.findByKey(order.clientId, this.transactionKey(order));
    if (!record) return null;
    const batch = (record.request as { platformInstructions?: Record<string, unknown> }).platformInstructions;
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
  private async signAndSubmit(
    order: OrderEntity,
    revalidated: OrderPatch,
    ctx: DriveContext,
  ): Promise<OrderEntity | null> {
    crashPoint('before_sign');
    let committing: Promise<OrderEntity | null> | null = null;
    let result;
    try {
      result = await this.transactions.signAndSend(
        this.signInput({
          id: order.id,
          clientId: order.clientId,
          attempt: order.attempt,
          buyerSubject: order.buyerSubject,
          requestId: order.requestId,
          batch: revalidated.batch ?? null,
          upstreamIdempotencyKey: revalidated.upstreamIdempotencyKey ?? null,
        }),
        {
          requestId: order.requestId ?? undefined,
          followUpMs: this.config.CHECKOUT_LEASE_MS,
          // The key is the order's (committed with it): signing need not wait for the ledger's commit.
          signAlongsideInsert: true,
          onSigned: () => {
            crashPoint('after_sign');
            crashPoint('before_submit');
          },
          alongsideAnswer: (record, answer) => {
            crashPoint('after_submit');
            committing = this.commit(
              order,
              ['revalidated', 'signing', 'signed', 'submitted'],
              {
                ...revalidated,
                ...signedPatch(record),
                state: 'submitted',
                recoveryPoint: 'track',
                upstreamStatus: answer.status,
              },
              null,
              [REVALIDATED_STEP, { step: 'signing' }, SIGNED_STEP, { step: 'submitted' }],
            );
            return committing;
          },
        },
      );
    } catch (error) {
      // Signing failed, or recording its signature did (the bytes may then have left: the `sign` step signs
      // again with the same key and sends the same bytes). The revalidation is committed, then the error decides;
      // a key that holds another request goes to `lookup` in the same commit.
      const held = keyHoldsAnotherRequest(error);
      const at = await this.commit(
        order,
        ['revalidated', 'signing'],
        held ? { ...revalidated, recoveryPoint: 'lookup' } : revalidated,
        held ? describe(error) : null,
        [REVALIDATED_STEP, { step: 'signing' }],
      );
      if (!at || held) return at;
      if (error instanceof AppError && error.code === 'UPSTREAM_REJECTED')
        return this.finish(at, 'failed', 'SIGNING_REJECTED', error.message);
      return this.retryLater(at, error);
    }
    const { record, sent } = result;
    ctx.record = record;
    if (committing !== null) {
      const committed = await (committing as Promise<OrderEntity | null>);
      if (!committed) return null;
      // Answered and committed, then the ledger's record of the answer failed: tracked on from `track` later.
      if ('error' in sent) return this.onSendFailed(committed, sent.error, { recoveryPoint: 'lookup' });
      ctx.record = sent.record;
      ctx.nextPollAt = (sent.answeredAt ?? Date.now()) + this.config.CHECKOUT_TRACK_POLL_MS;
      return sent.record.finalAt ? this.onLedgerStatus(committed, sent.record) : committed;
    }
    // No answer recorded (refused, unknown, or a replayed signature sent without news): the signature first.
    const signed = await this.commit(
      order,
      ['revalidated', 'signing', 'signed'],
      { ...revalidated, ...signedPatch(record), state: 'signed', recoveryPoint: 'submit' },
      null,
      [REVALIDATED_STEP, { step: 'signing' }, SIGNED_STEP],
    );
    return signed && this.afterSubmission(signed, sent, ctx);
  }

  private async sign(order: OrderEntity, ctx: DriveContext): Promise<OrderEntity | null> {
    let current: OrderEntity | null = order;
    if (order.state !== 'signing') {
      current = await this.commit(order, 'signing', {
        state: 'signing',
        upstreamIdempotencyKey: this.upstreamKey(order),
      });
      if (!current) return null;
    }
    crashPoint('before_sign');
    const signing: OrderEntity = current;
    let record: TxRecord;
    try {
      ({ record } = await this.transactions.sign(this.signInput(signing)));
    } catch (error) {
      if (keyHoldsAnotherRequest(error))
        return this.commit(signing, 'signing', { recoveryPoint: 'lookup' }, describe(error));
      // A definite refusal (4xx) means nothing was signed; anything else: same key again later.
      if (error instanceof AppError && error.code === 'UPSTREAM_REJECTED')
        return this.finish(signing, 'failed', 'SIGNING_REJECTED', error.message);
      return this.retryLater(signing, error);
    }
    crashPoint('after_sign');
    ctx.record = record;
    // The order's `signed` commit runs alongside the first submission. Safe: the order and its upstream key were
    // committed before signing and the ledger holds the signed bytes (marked submitted in the statement that
    // recorded them); if this process dies before the commit lands, recovery signs again with the same key
    // (the upstream returns the same transaction) and re-sends the same bytes.
    const [committed, sent] = await Promise.all([
      this.commit(signing, 'signed', { ...signedPatch(record), state: 'signed', recoveryPoint: 'submit' }),
      this.send(signing, record),
    ]);
    return committed && this.afterSubmission(committed, sent, ctx);
  }

  /** The signing request of the order's current attempt (the same on every retry: same key, same batch). */
  private signInput(
    order: Pick<
      OrderEntity,
      'id' | 'clientId' | 'attempt' | 'batch' | 'upstreamIdempotencyKey' | 'buyerSubject' | 'requestId'
    >,
  ): Parameters<TransactionsService['sign']>[0] {
    if (!order.batch) throw new Error('order in signing without a batch');
    return {
      clientId: order.clientId,
      idempotencyKey: this.transactionKey(order),
      upstreamIdempotencyKey: order.upstreamIdempotencyKey ?? this.upstreamKey(order),
      kind: 'user',
      subject: order.buyerSubject,
      batch: batchFromWire(order.batch),
      requestId: order.requestId ?? undefined,
      onFinal: CHECKOUT_ON_FINAL,
      // Submitted right after: the ledger marks the submission in the statement recording the signature.
      submitNextFollowUpMs: this.config.CHECKOUT_LEASE_MS,
    };
  }

  private async submit(order: OrderEntity, ctx: DriveContext): Promise<OrderEntity | null> {
    let stored = ctx.record ?? (await this.ledgerRecord(order));
    if (stored.phase === 'signing') {
      // The order's `signed` commit landed, the ledger's did not (a crash between them): sign again with the
      // same key, which returns the same transaction.
      try {
        ({ record: stored } = await this.transactions.sign(this.signInput(order)));
      } catch (error) {
        return this.retryLater(order, error);
      }
    }
    return this.afterSubmission(order, await this.send(order, stored), ctx);
  }

  /**
   * Sends the signed bytes through the ledger (safe to repeat), crash points around it; the ledger's record after
   * it, or the error (never throws it: the caller decides with `onSendFailed`, passing its own refusal patch).
   * `alongsideFinal` runs the order's final commit alongside the ledger's record of a final answer.
   */
  private async send(
    order: OrderEntity,
    stored: TxRecord,
    alongsideFinal?: (answer: Pick<TxRecord, 'status' | 'failureReason'>) => Promise<unknown>,
  ): Promise<Sent> {
    crashPoint('before_submit');
    let answered = false;
    const afterSubmit = (): void => {
      if (answered) return;
      answered = true;
      crashPoint('after_submit');
    };
    try {
      const { record, answeredAt } = await this.transactions.send(stored, {
        requestId: order.requestId ?? undefined,
        followUpMs: this.config.CHECKOUT_LEASE_MS,
        ...(alongsideFinal && {
          alongsideFinal: (answer: Pick<TxRecord, 'status' | 'failureReason'>) => {
            afterSubmit();
            return alongsideFinal(answer);
          },
        }),
      });
      afterSubmit();
      return { record, answeredAt };
    } catch (error) {
      return { error };
    }
  }

  /**
   * A failed send: refused (4xx) → these bytes will never land, the purchase status decides (`lookup`, committed
   * with the caller's `onRefused`); anything else → the same bytes again later.
   */
  private onSendFailed(
    order: OrderEntity,
    error: unknown,
    onRefused: OrderPatch,
  ): Promise<OrderEntity | null> {
    if (error instanceof AppError && error.code === 'UPSTREAM_REJECTED')
      return this.commit(order, 'submitted', onRefused, error.message);
    return this.retryLater(order, error);
  }

  /** Commits the first submission's outcome on the order (at `signed`): tracked on, or looked up if refused. */
  private async afterSubmission(
    order: OrderEntity,
    sent: Sent,
    ctx: DriveContext,
  ): Promise<OrderEntity | null> {
    if ('error' in sent)
      return this.onSendFailed(order, sent.error, { state: 'submitted', recoveryPoint: 'lookup' });
    const { record, answeredAt } = sent;
    ctx.record = record;
    // The next look is one poll after the answer arrived (as any client polling), not after its records.
    ctx.nextPollAt = (answeredAt ?? Date.now()) + this.config.CHECKOUT_TRACK_POLL_MS;
    const committed = await this.commit(order, 'submitted', {
      state: 'submitted',
      recoveryPoint: 'track',
      upstreamStatus: record.status,
    });
    return committed && (record.finalAt ? this.onLedgerStatus(committed, record) : committed);
  }

  /**
   * Polls the status in process: re-sends the same bytes (safe) every CHECKOUT_TRACK_POLL_MS after the previous
   * answer and finalizes as soon as the upstream says final. Bounded by half a lease (the last commit renewed
   * it): then the order is handed back, due at once, for the worker of any replica to continue.
   */
  private async track(order: OrderEntity, ctx: DriveContext): Promise<OrderEntity | null> {
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
    start: TxRecord,
    handBackAt: number,
    maxPolls: number,
  ): Promise<OrderEntity | null> {
    let record = start;
    const poll = this.config.CHECKOUT_TRACK_POLL_MS;
    for (let polls = 0; polls < maxPolls; polls++) {
      if (record.finalAt) return this.onLedgerStatus(order, record);
      const wait = Math.max(0, ctx.nextPollAt - Date.now());
      if (Date.now() + wait >= handBackAt || this.stopping.signal.aborted) break;
      if (wait > 0) await sleep(wait, undefined, { signal: this.stopping.signal }).catch(() => undefined);
      if (this.stopping.signal.aborted) break;
      // A final answer: the order's final commit runs alongside the ledger's record of it (one round trip).
      let finished: Promise<OrderEntity | null> | null = null;
      const sent = await this.send(order, record, (answer) => {
        finished = this.onLedgerStatus(order, answer);
        return finished;
      });
      if ('error' in sent) {
        if (finished) await (finished as Promise<unknown>).catch(() => undefined);
        return this.onSendFailed(order, sent.error, { recoveryPoint: 'lookup' });
      }
      if (finished) return finished;
      record = sent.record;
      ctx.record = record;
      ctx.nextPollAt = (sent.answeredAt ?? Date.now()) + poll;
    }
    if (record.finalAt) return this.onLedgerStatus(order, record);
    return this.waitForLedger(order, maxPolls === 1 ? poll : 0);
  }

  private async ledgerRecord(order: OrderEntity): Promise<TxRecord> {
    const [stored] = await this.transactions.findByIds(
      order.transactionRecordId ? [order.transactionRecordId] : [],
    );
    if (!stored) throw new Error('order without its ledger transaction');
    return stored;
  }

  /** Hands a tracked order back, due again in `delayMs` (the worker of any replica continues it). */
  private waitForLedger(order: OrderEntity, delayMs: number): Promise<null> {
    return this.repo.release(order.id, this.instanceId, delayMs, null).then(() => null);
  }

  /** A final submission status: only `confirmed` completes an order. */
  private onLedgerStatus(
    order: OrderEntity,
    record: Pick<TxRecord, 'status' | 'failureReason'>,
  ): Promise<OrderEntity | null> {
    const status = record.status;
    if (status === 'confirmed')
      return this.finish(order, 'confirmed', null, null, { upstreamStatus: 'confirmed' });
    if (status === 'landed_with_error')
      return this.finish(
        order,
        'landed_with_error',
        'LANDED_WITH_ERROR',
        record.failureReason ?? 'landed with error',
        {
          upstreamStatus: 'landed_with_error',
        },
      );
    if (status === 'expired')
      return this.commit(order, 'expired', {
        state: 'expired',
        recoveryPoint: 'lookup',
        upstreamStatus: 'expired',
      });
    return this.waitForLedger(order, this.config.CHECKOUT_TRACK_POLL_MS);
  }

  /**
   * Before any new attempt: the purchase status by this attempt's key. Explicit `confirmed` or
   * `landed_with_error` decides the order; explicit `expired` (or no purchase by that key) allows attempt n+1;
   * anything else (empty, unknown, still processing) decides nothing and is asked again later.
   */
  private async lookup(order: OrderEntity): Promise<OrderEntity | null> {
    const key = order.upstreamIdempotencyKey ?? this.upstreamKey(order);
    crashPoint('before_purchase_status');
    let verdict;
    try {
      verdict = interpretPurchaseStatus(
        await this.upstream.getPurchaseStatus(key, { requestId: order.requestId ?? undefined }),
        key,
      );
    } catch (error) {
      if (!(error instanceof UpstreamError && error.code === 'NOT_FOUND' && !error.outcomeUnknown))
        return this.retryLater(order, error);
      verdict = 'none' as const;
    }
    crashPoint('after_purchase_status');
    if (verdict === 'pending' || verdict === 'unknown')
      return this.retryLater(order, new Error(`purchase status says nothing final (${verdict})`));
    if (verdict === 'confirmed')
      return this.finish(order, 'confirmed', null, null, { upstreamStatus: 'confirmed' });
    if (verdict === 'landed_with_error')
      return this.finish(order, 'landed_with_error', 'LANDED_WITH_ERROR', 'The ledger refused the purchase', {
        upstreamStatus: 'landed_with_error',
      });
    // expired, or no purchase was ever made with this key: the attempt can no longer land.
    if (order.attempt >= this.config.CHECKOUT_MAX_ATTEMPTS)
      return this.finish(
        order,
        'failed',
        'ATTEMPTS_EXHAUSTED',
        `No attempt of ${order.attempt} reached the ledger in time`,
      );
    return this.commit(
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

  private async refresh(order: OrderEntity): Promise<OrderEntity | null> {
    crashPoint('before_refresh');
    let releasePermit: () => void;
    try {
      releasePermit = await this.refreshPermits().acquire(
        this.config.CHECKOUT_LEASE_MS / 2,
        () => new Error('no mirror refresh slot free'),
      );
    } catch {
      // Busy with other refreshes: due again after a poll, not counted as a failed try.
      return this.waitForLedger(order, this.config.CHECKOUT_TRACK_POLL_MS);
    }
    try {
      await this.catalog.refreshEvent(order.eventId);
    } catch (error) {
      releasePermit();
      if (order.stepFailures + 1 < MAX_REFRESH_TRIES) return this.retryLater(order, error);
      return this.commit(
        order,
        'final',
        { recoveryPoint: 'done' },
        `mirror refresh abandoned: ${describe(error)}`,
        'mirror_refresh_abandoned',
      );
    }
    releasePermit();
    crashPoint('after_refresh');
    return this.commit(order, 'final', { recoveryPoint: 'done' }, null, 'mirror_refreshed');
  }

  /** At most a quarter of the pool's background share in refreshes at once (each may hold two connections). */
  private refreshPermits(): Semaphore {
    const background = poolGateOf(this.dataSource)?.background ?? this.config.CHECKOUT_WORKER_BATCH;
    this.refreshes ??= new Semaphore(Math.max(1, Math.floor(background / 4)));
    return this.refreshes;
  }

  private finish(
    order: OrderEntity,
    state: OrderState,
    code: OrderFailureCode | null,
    reason: string | null,
    extra: OrderPatch = {},
  ): Promise<OrderEntity | null> {
    return this.commit(order, 'final', {
      ...extra,
      state,
      recoveryPoint: state === 'confirmed' ? 'refresh' : 'done',
      failureCode: code,
      failureReason: reason,
    });
  }

  /**
   * Commits a step (crash points around it; several steps may share one commit), logs one line per step and
   * observes final states.
   */
  private async commit(
    order: OrderEntity,
    name: CommitName | CommitName[],
    patch: OrderPatch,
    detail: string | null = null,
    steps: AuditStep[] | string = patch.state ?? (Array.isArray(name) ? name[0] : name),
  ): Promise<OrderEntity | null> {
    const names = Array.isArray(name) ? name : [name];
    const audit = typeof steps === 'string' ? [{ step: steps }] : steps;
    for (const n of names) crashPoint(`before_commit_${n}` as CrashPointName);
    const committed = await this.repo.commit(
      order.id,
      this.instanceId,
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
      return null;
    }
    for (const a of audit)
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
    if (!FINAL_ORDER_STATES.includes(order.state) && FINAL_ORDER_STATES.includes(committed.state))
      this.metrics.observeFinal(committed);
    return committed;
  }

  /** Hands the order back with a backoff (Retry-After honoured); the same step runs again later. */
  private async retryLater(order: OrderEntity, error: unknown): Promise<null> {
    const message = describe(error);
    this.logger.log(
      { orderId: order.id, requestId: order.requestId, step: order.recoveryPoint, error: message },
      'checkout step deferred',
    );
    await this.repo.release(order.id, this.instanceId, this.backoff(order, error), message);
    return null;
  }

  private backoff(order: OrderEntity, error?: unknown): number {
    const { CHECKOUT_RETRY_BASE_DELAY_MS: base, CHECKOUT_RETRY_MAX_DELAY_MS: max } = this.config;
    const delay = Math.min(max, base * 2 ** Math.min(20, order.stepFailures));
    const asked =
      error instanceof UpstreamError
        ? (error.retryAfterMs ?? 0)
        : error instanceof AppError
          ? (error.retryAfterSeconds ?? 0) * 1000
          : 0;
    return Math.max(delay, Math.min(asked, max * 4));
  }

  private transactionKey(order: Pick<OrderEntity, 'id' | 'attempt'>): string {
    return `checkout:${order.id}:${order.attempt}`;
  }
}

/** Audit rows of a combined commit: the state and recovery point each step stood for. */
const REVALIDATED_STEP: AuditStep = { step: 'revalidated', state: 'revalidated', recoveryPoint: 'sign' };
const SIGNED_STEP: AuditStep = { step: 'signed', state: 'signed', recoveryPoint: 'submit' };

/** The order's record of its signed transaction. */
function signedPatch(record: TxRecord): OrderPatch {
  return {
    transactionRecordId: record.id,
    custodialTransactionId: record.custodialTransactionId,
    // The ledger's id of a transaction is its first signature, the fee payer's.
    transactionSignature: record.feePayerSignature,
  };
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

function describe(error: unknown): string {
  if (error instanceof UpstreamError)
    return `${error.code}${error.status ? ` ${error.status}` : ''}: ${error.message}`;
  if (error instanceof AppError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? error.message : 'unknown error';
}
