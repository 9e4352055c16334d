import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { TransactionsConfig } from '../config/transactions.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { LeaseLostError, type Fence } from '../durable-work/lease.sql';
import { UpstreamClient } from '../upstream/upstream.client';
import { sanitisedUpstreamMessage } from '../upstream/upstream-error.mapper';
import { UpstreamError } from '../upstream/upstream.error';
import type { SubmissionResult } from '../upstream/upstream.types';
import { isFinalStatus, type LedgerTransactionEntity } from './ledger-transaction.entity';
import { LedgerTransactionRepository } from './ledger-transaction.repository';
import { delayFor } from './transactions.backoff';
import { isDefiniteRejection, TransactionErrors } from './transactions.errors';
import { TransactionsMetrics } from './transactions.metrics';
import type { FinalAnswer, SendOptions, SubmitOutcome } from './transactions.types';

/** What the submitter runs alongside recording an answer (TransactionsService adapts the caller's hooks). */
interface Alongside {
  /** Runs concurrently with recording a final answer, both awaited (the caller's own commit of it). */
  alongsideFinal?: (answer: FinalAnswer) => Promise<unknown>;
  /** Runs concurrently with recording an answer (any status), both awaited. */
  alongside?: (answer: SubmissionResult) => Promise<unknown>;
}

/**
 * TransactionsService's submission path: sending a record's stored signed bytes and recording the answer,
 * for the HTTP routes (`submitRecord`), in-process pollers (`send`), `signAndSend` and the tracker
 * (TransactionsTrackerWork).
 */
@Injectable()
export class TransactionsSubmitter {
  /** Log lines keep the service's context (`TransactionsService`), as before the split. */
  private readonly logger = new Logger('TransactionsService');
  /** This replica's name in leases and history rows (durable work's identity). */
  private readonly instanceId: string;

  constructor(
    private readonly repo: LedgerTransactionRepository,
    private readonly upstream: UpstreamClient,
    private readonly config: TransactionsConfig,
    private readonly metrics: TransactionsMetrics,
    private readonly work: DurableWorkService,
  ) {
    this.instanceId = work.instanceId;
  }

  /**
   * TransactionsService.send: submits, or re-sends, the stored bytes of a record the caller already holds (from
   * `sign` or `findByIds`), for in-process callers that poll for the status (checkout). No re-read. The first
   * submission is marked before it is sent, as `submitRecord` does; a re-send whose answer changes nothing (the
   * same non-final status) is not written; the tracker's own next look is `followUpMs` away (the caller polls
   * until then, and if it dies the tracker carries on). Errors as `submitRecord`: a 4xx → UPSTREAM_REJECTED;
   * otherwise `answered: false`.
   */
  async send(record: LedgerTransactionEntity, options: SendOptions & Alongside = {}): Promise<SubmitOutcome> {
    if (record.phase !== 'signed') throw TransactionErrors.notSigned();
    if (record.finalAt) return { record, answered: true };
    const followUpMs = options.followUpMs ?? this.config.TX_LEASE_MS;
    let current = record;
    if (!current.submittedAt || current.trackingStopped)
      current = await this.markRequested(current, null, followUpMs, options.fence);
    const outcome = await this.sendSubmission(current, this.instanceId, options.requestId, {
      nextDelayMs: followUpMs,
      skipUnchanged: current.submitAttempts > 0,
      notAfter: options.fence?.notAfter,
      alongsideFinal: options.alongsideFinal,
      alongside: options.alongside,
    });
    if (outcome.record.trackingStopped === 'rejected' && !outcome.answered)
      throw TransactionErrors.submissionRefused(outcome.record.lastError);
    return outcome;
  }

  /**
   * Sends the stored bytes once and records the answer (a 4xx stops tracking; other failures reschedule).
   * Called by `send`, `submitRecord`, TransactionsService.signAndSend and the tracker (TransactionsTrackerWork).
   */
  async sendSubmission(
    record: LedgerTransactionEntity,
    actor: string,
    requestId?: string,
    options: Alongside & {
      nextDelayMs?: number;
      skipUnchanged?: boolean;
      /** No attempt of the call starts past it: the caller's lease deadline (its fence's `notAfter`). */
      notAfter?: number;
      /** The upstream call for these bytes, already sent (signAndSend): only its answer is recorded here. */
      answer?: Promise<SubmissionResult>;
    } = {},
  ): Promise<SubmitOutcome> {
    const nextDelay = options.nextDelayMs ?? delayFor(this.config, record.submitAttempts + 1);
    try {
      const result = await (options.answer ??
        this.upstream.submitTransaction(
          {
            signedTransaction: record.signedTransaction ?? '',
            additionalSignatures: record.additionalSignatures ?? [],
          },
          { requestId, notAfter: options.notAfter },
        ));
      const answeredAt = Date.now();
      // A poll that learnt nothing new (same non-final status, nothing to clear) leaves the row as it is.
      if (
        options.skipUnchanged &&
        result.status === record.status &&
        !isFinalStatus(result.status) &&
        (result.failureReason ?? null) === (record.failureReason ?? null) &&
        record.lastError === null
      )
        return { record, answered: true, answeredAt };
      const final = result.status !== null && isFinalStatus(result.status) ? result.status : null;
      // The caller's own commit is started first: it is what its customer waits for (checkout's order turns
      // final in it), and each statement sent costs the sender a wake-up of the database on a busy machine.
      const [, , updated] = await Promise.all([
        final && options.alongsideFinal?.({ status: final, failureReason: result.failureReason ?? null }),
        options.alongside?.(result),
        this.repo.recordSubmission(record.id, actor, result, nextDelay),
      ]);
      if (!updated) throw new AppError('INTERNAL', 'ledger transaction vanished');
      if (updated.finalAt && !record.finalAt) {
        this.metrics.observeFinal(updated);
        this.logger.log(
          { transactionId: updated.custodialTransactionId, status: updated.status, requestId },
          'ledger transaction final',
        );
      }
      return { record: updated, answered: true, answeredAt };
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      const rejected = isDefiniteRejection(error);
      // `lastError` is tenant-visible (the transaction's view, an order's refusal): code and a fixed text; the
      // upstream's own words (body excerpt, message) only in this log line.
      const detail = `${error.code}${error.status ? ` ${error.status}` : ''}: ${sanitisedUpstreamMessage(error)}`;
      this.logger.warn(
        {
          transactionId: record.custodialTransactionId ?? record.id,
          requestId,
          upstream: {
            code: error.code,
            status: error.status,
            message: error.message,
            excerpt: error.excerpt,
          },
        },
        'upstream submission failed',
      );
      // A Retry-After is honoured as the one policy does: capped (a 429 cannot park tracking past its give-up).
      const delay = Math.max(nextDelay, delayFor(this.config, record.submitAttempts + 1, error));
      const updated = await this.repo.recordSubmitError(record.id, actor, detail, rejected, delay);
      return { record: updated ?? record, answered: false };
    }
  }

  /**
   * Marks a signed record as submitted (re-opening a stopped tracking) and sends its bytes: the HTTP routes'
   * submit (`additional`: the first submission's extra signatures) and the tracker after it resolved a signing.
   * A final record is not re-sent; a 4xx → UPSTREAM_REJECTED; otherwise `answered: false`.
   */
  async submitRecord(
    record: LedgerTransactionEntity,
    additional: { address: string; signature: string }[] | null,
    requestId?: string,
  ): Promise<SubmitOutcome> {
    if (record.phase !== 'signed') throw TransactionErrors.notSigned();
    if (record.finalAt) return { record, answered: true };
    const marked = await this.markRequested(record, additional, this.config.TX_LEASE_MS);
    const outcome = await this.sendSubmission(marked, this.instanceId, requestId);
    if (outcome.record.trackingStopped === 'rejected' && !outcome.answered)
      throw TransactionErrors.submissionRefused(outcome.record.lastError);
    return outcome;
  }

  /**
   * Marks the record's submission as requested (re-opening a stopped tracking; given up once its blockhash can
   * no longer land) with the tracker's next look `trackerDelayMs` away; a record that is not signed → 409; with a
   * `fence` no longer current → LeaseLostError (nothing sent).
   */
  private async markRequested(
    record: LedgerTransactionEntity,
    additional: { address: string; signature: string }[] | null,
    trackerDelayMs: number,
    fence?: Fence,
  ): Promise<LedgerTransactionEntity> {
    const marked = await this.repo.markSubmitRequested(
      record.id,
      this.instanceId,
      this.config.TX_BLOCKHASH_LIFETIME_MS + this.config.TX_GIVE_UP_GRACE_MS,
      additional,
      trackerDelayMs,
      fence,
    );
    // A first submission is new bytes on the ledger: a caller whose claim was taken over sends nothing.
    if (!marked && fence && !(await this.work.holds(fence, 'submit'))) throw new LeaseLostError(fence);
    if (!marked) throw TransactionErrors.notSigned();
    return marked;
  }
}
