import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { LedgerTransactionEntity } from './ledger-transaction.entity';
import { TransactionsController } from './transactions.controller';
import { TransactionsMetrics } from './transactions.metrics';
import { TransactionsTracker } from './transactions.scheduler';
import { TransactionsService } from './transactions.service';

/**
 * Ledger transactions: sign → submit → track → after-final handlers. Exports only TransactionsService
 * (selling and checkout use it in-process). TransactionsConfig comes from AppConfigModule.
 */
@Module({
  imports: [TypeOrmModule.forFeature([LedgerTransactionEntity])],
  controllers: [TransactionsController],
  providers: [TransactionsService, TransactionsMetrics, TransactionsTracker],
  exports: [TransactionsService],
})
export class TransactionsModule {}
