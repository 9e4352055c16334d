import { Injectable, Logger } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { TransactionsConfig } from '../config/transactions.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import type { InstructionName } from '../upstream/upstream.types';
import type { LedgerTransactionEntity } from './ledger-transaction.entity';
import { LedgerTransactionRepository } from './ledger-transaction.repository';
import { delayFor } from './transactions.backoff';
import { TransactionsMetrics } from './transactions.metrics';
import { TransactionsSigner } from './transactions.signer';
import { TransactionsSubmitter } from './transactions.submitter';
import type { FinalHandler, FinalHandlerOptions } from './transactions.types';

/**
 * The background tracker's work (TransactionsTracker runs it on the durable-work loop): claiming due rows, one
 * attempt on each, and the after-final handlers registered by name. Every claim carries a fencing token; the
 * attempt's hand-back only lands while that claim is current (a row claimed again meanwhile is the new holder's).
 */
@Injectable()
export class TransactionsTrackerWork {
  private readonly handlers = new Map<string, { handler: FinalHandler; options: FinalHandlerOptions }>();
  /** Instruction → the handler the signing routes record for it (FinalHandlerOptions.instructions). */
  private readonly byInstruction = new Map<InstructionName, string>();
  /** Log lines keep the service's context (`TransactionsService`), as before the split. */
  private readonly logger = new Logger('TransactionsService');
  /** This replica's name in leases and history rows (durable work's identity). */
  private readonly instanceId: string;

  constructor(
    private readonly repo: LedgerTransactionRepository,
    private readonly signer: TransactionsSigner,
    private readonly submitter: TransactionsSubmitter,
    private readonly config: TransactionsConfig,
    private readonly metrics: TransactionsMetrics,
    private readonly durable: DurableWorkService,
  ) {
    this.instanceId = durable.instanceId;
  }

  /**
   * TransactionsService.registerFinalHandler: records name the handler in `onFinal`; `work` runs it. A name, and
   * an instruction of `options.instructions`, is registered once (a second registration is a programming error).
   */
  registerFinalHandler(name: string, handler: FinalHandler, options: FinalHandlerOptions = {}): void {
    if (this.handlers.has(name)) throw new Error(`after-final handler ${name} is already registered`);
    const max = options.maxAttempts;
    if (max !== undefined && (!Number.isInteger(max) || max < 1))
      throw new Error(`after-final handler ${name}: maxAttempts must be a positive integer`);
    for (const instruction of options.instructions ?? []) {
      const taken = this.byInstruction.get(instruction);
      if (taken !== undefined)
        throw new Error(`after-final handler for ${instruction} is already ${taken}, not ${name}`);
    }
    this.handlers.set(name, { handler, options });
    for (const instruction of options.instructions ?? []) this.byInstruction.set(instruction, name);
  }

  /** The handler registered for transactions of `instruction` that the signing routes create, if any. */
  finalHandlerFor(instruction: InstructionName): string | undefined {
    return this.byInstruction.get(instruction);
  }

  /**
   * Claims up to `room` due rows for this replica (a lease and a new fencing token on each); a pending
   * after-final handler only when this replica registered it.
   */
  claimDue(room: number = this.config.TX_TRACKER_BATCH): Promise<LedgerTransactionEntity[]> {
    return this.repo.claimDue(this.config.TX_LEASE_MS, room, this.config.TX_SIGN_RESOLVE_WINDOW_MS, [
      ...this.handlers.keys(),
    ]);
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
      const released = await this.repo.release(
        record.id,
        record.leaseToken,
        actor,
        startedAt,
        `${work}: ${result}`,
      );
      // The row was claimed again while this attempt ran (its lease expired): what it did was idempotent (same
      // key, same bytes), and the new holder carries on.
      if (!released && record.leaseToken)
        this.durable.fencedOff(
          { table: 'ledger_transactions', id: record.id, token: record.leaseToken },
          `tracker ${work}`,
        );
    }
  }

  /**
   * Runs the record's after-final handler once and records the run: done; failed and due again after the ledger's
   * backoff (growing with on_final_attempts); or, once a handler with `maxAttempts` has failed that many times,
   * given up (history `on_final` "gave up after N tries", last_error, a warning). A handler not registered on this
   * replica is not run and nothing is recorded: the row stays due, and only a replica that registered it claims it.
   */
  private async runFinalHandler(record: LedgerTransactionEntity, actor: string): Promise<string> {
    const name = record.onFinal;
    if (!name || record.onFinalDoneAt) return 'none';
    const registered = this.handlers.get(name);
    if (!registered) return 'not_registered';
    try {
      await registered.handler(record);
    } catch (e) {
      const error = e instanceof Error ? e.message.slice(0, 300) : 'handler failed';
      const tries = record.onFinalAttempts + 1;
      const max = registered.options.maxAttempts;
      if (max !== undefined && tries >= max) {
        await this.repo.recordOnFinal(record.id, actor, error, null);
        this.logger.warn(
          { transactionId: record.id, handler: name, tries, error },
          'after-final handler given up',
        );
        return 'gave_up';
      }
      await this.repo.recordOnFinal(record.id, actor, error, delayFor(this.config, tries, e));
      return 'failed';
    }
    await this.repo.recordOnFinal(record.id, actor, null, null);
    return 'done';
  }
}
