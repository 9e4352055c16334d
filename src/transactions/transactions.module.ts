import { DatabaseClockModule } from '../database/database-clock.module';
import { DatabaseModule } from '../database/database.module';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DurableWorkModule } from '../durable-work/durable-work.module';
import { LedgerTransactionEntity } from './ledger-transaction.entity';
import { LedgerTransactionRepository } from './ledger-transaction.repository';
import { TransactionsController } from './transactions.controller';
import { TransactionsMetrics } from './transactions.metrics';
import { TransactionsService } from './transactions.service';
import { TransactionsSigner } from './transactions.signer';
import { TransactionsSubmitter } from './transactions.submitter';
import { TransactionsTracker } from './transactions.tracker';
import { TransactionsTrackerWork } from './transactions.tracker-work';

/**
 * Ledger transactions: sign → submit → track → after-final handlers. Exports only TransactionsService
 * (selling and checkout use it in-process). TransactionsConfig comes from AppConfigModule; leases, the worker
 * loop and the backoff policy from DurableWorkModule.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([LedgerTransactionEntity]),
    DatabaseClockModule,
    DatabaseModule,
    DurableWorkModule,
  ],
  controllers: [TransactionsController],
  providers: [
    TransactionsService,
    LedgerTransactionRepository,
    TransactionsSigner,
    TransactionsSubmitter,
    TransactionsTrackerWork,
    TransactionsMetrics,
    TransactionsTracker,
  ],
  exports: [TransactionsService],
})
export class TransactionsModule {}
