import { Injectable } from '@nestjs/common';
import { TransactionsConfig } from '../config/transactions.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import type { WorkerLoop } from '../durable-work/worker-loop';
import type { LedgerTransactionEntity } from './ledger-transaction.entity';
import { TransactionsTrackerWork } from './transactions.tracker-work';

/**
 * The background tracker, on every replica (TX_TRACKER_ENABLED), on the durable-work loop: every
 * TX_TRACKER_INTERVAL_MS it claims due rows through durable work's queue (a lease with a fencing token, so one
 * replica works a row at a time), up to TX_TRACKER_BATCH in progress, and works each once: repeat an unknown
 * signing with the same key, re-submit the same signed bytes, or run a pending after-final handler. Nothing is
 * held in memory: after a crash the leases expire and any replica picks the rows up. The loop starts and stops
 * with the application (DurableWorkService).
 */
@Injectable()
export class TransactionsTracker {
  private readonly loop: WorkerLoop<LedgerTransactionEntity>;

  constructor(work: DurableWorkService, trackerWork: TransactionsTrackerWork, config: TransactionsConfig) {
    this.loop = work.loop({
      name: 'ledger_transactions',
      enabled: config.TX_TRACKER_ENABLED,
      intervalMs: config.TX_TRACKER_INTERVAL_MS,
      concurrency: config.TX_TRACKER_BATCH,
      claim: (room) => trackerWork.claimDue(room),
      work: (row) => trackerWork.work(row),
    });
  }

  /** One pass: claims what there is room for and starts working it; returns how many rows it claimed. */
  tick(): Promise<number> {
    return this.loop.tick();
  }
}
