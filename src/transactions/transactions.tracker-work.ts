import type { Logger } from '@nestjs/common';
import { AppError } from '../common/app-error';
import type { TransactionsConfig } from '../config/transactions.config';
import type { LedgerTransactionEntity } from './ledger-transaction.entity';
import type { LedgerTransactionRepository } from './ledger-transaction.repository';
import { delayFor } from './transactions.backoff';
import type { TransactionsMetrics } from './transactions.metrics';
import type { TransactionsSigner } from './transactions.signer';
import type { TransactionsSubmitter } from './transactions.submitter';
import type { FinalHandler } from './transactions.types';

/**
 * The background tracker's work (TransactionsTracker schedules it, through TransactionsService): claiming due
 * rows, one attempt on each, and the after-final handlers registered by name. Built by TransactionsService,
 * which shares its repository, logger and replica id.
 */
export class TransactionsTrackerWork {
  private readonly handlers = new Map<string, FinalHandler>();

  constructor(
    private readonly repo: LedgerTransactionRepository,
    private readonly signer: TransactionsSigner,
    private readonly submitter: TransactionsSubmitter,
    private readonly config: TransactionsConfig,
    private readonly metrics: TransactionsMetrics,
    /** TransactionsService's logger (its log lines keep the service's context). */
    private readonly logger: Logger,
    /** TransactionsService.instanceId: names this replica in leases and history rows. */
    private readonly instanceId: string,
  ) {}

  /** TransactionsService.registerFinalHandler: records name the handler in `onFinal`; `work` runs it. */
  registerFinalHandler(name: string, handler: FinalHandler): void {
    this.handlers.set(name, handler);
  }

  /** Claims a batch of due rows for this replica (a lease on each). */
  claimDue(): Promise<LedgerTransactionEntity[]> {
    return this.repo.claimDue(
      this.instanceId,
      this.config.TX_LEASE_MS,
      this.config.TX_TRACKER_BATCH,
      this.config.TX_SIGN_RESOLVE_WINDOW_MS,
    );
  }

  /** One background attempt on a claimed row; always releases the lease and logs the attempt. */
  async work(record: LedgerTransactionEntity): Promise<void> {
    const startedAt = new Date();
    const actor = this.instanceId;
    let work = 'none';
    let result = 'ok';
    try {
      if (record.phase === 'signing') {
        work = 'sign';
        const signed = await this.signer.callSign(record, actor).catch((error: unknown) => {
          result = error instanceof AppError ? error.code : 'error';
          return null;
        });
        if (signed?.submitOnSign) {
          work = 'sign+submit';
          const outcome = await this.submitter.submitRecord(signed, null);
          result = outcome.record.status ?? 'unknown';
        }
      } else if (record.finalAt) {
        work = 'on_final';
        result = await this.runFinalHandler(record, actor);
      } else if (record.phase === 'signed' && !record.trackingStopped) {
        work = 'submit';
        const { record: after, answered } = await this.submitter.sendSubmission(record, actor);
        result = answered ? (after.status ?? 'null') : (after.lastError ?? 'error').split(':')[0];
        if (after.finalAt && after.onFinal && !after.onFinalDoneAt) await this.runFinalHandler(after, actor);
        else if (!after.finalAt && !after.trackingStopped) await this.repo.recordGaveUp(record.id, actor);
      }
    } catch (error) {
      result = 'error';
      this.logger.warn({ err: error, transactionId: record.id }, 'tracker attempt failed');
    } finally {
      this.metrics.attempts.inc({ work, result });
      await this.repo.release(record.id, actor, startedAt, `${work}: ${result}`);
    }
  }

  private async runFinalHandler(record: LedgerTransactionEntity, actor: string): Promise<string> {
    const name = record.onFinal;
    if (!name || record.onFinalDoneAt) return 'none';
    const handler = this.handlers.get(name);
    let error: string | null = null;
    if (!handler) error = `no handler named ${name} on this replica`;
    else {
      try {
        await handler(record);
      } catch (e) {
        error = e instanceof Error ? e.message.slice(0, 300) : 'handler failed';
      }
    }
    await this.repo.recordOnFinal(record.id, actor, error, delayFor(this.config, 2));
    return error === null ? 'done' : 'failed';
  }
}
