import { DatabaseClockModule } from '../database/database-clock.module';
import { DatabaseModule } from '../database/database.module';
import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CatalogSyncModule } from '../catalog-sync/catalog-sync.module';
import { DurableWorkModule } from '../durable-work/durable-work.module';
import { PaginationModule } from '../common/pagination.module';
import { TransactionsModule } from '../transactions/transactions.module';
import { CheckoutController } from './checkout.controller';
import { CheckoutDriver } from './checkout.driver';
import { CheckoutIntegrator } from './checkout.integrator';
import { CheckoutLedgerHooks } from './checkout.ledger-hooks';
import { CheckoutMetrics } from './checkout.metrics';
import { CheckoutWorker } from './checkout.worker';
import { CheckoutService } from './checkout.service';
import { OrderAttempt } from './order.attempt';
import { OrderCommitter } from './order.committer';
import { OrderEntity } from './order.entity';
import { OrderFiguresRepository } from './order-figures.repository';
import { OrderRepository } from './order.repository';
import { OrderSettlement } from './order.settlement';
import { OrderTracker } from './order.tracker';

/**
 * Checkout: orders bought exactly once (revalidate → sign → submit → confirm) with a recovery worker.
 * Every part of a drive is a provider (the driver, its steps, the committer, the repository); leases, the worker
 * loop and the backoff policy come from DurableWorkModule. CheckoutConfig comes from AppConfigModule;
 * UpstreamClient from the global UpstreamModule.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([OrderEntity]),
    DatabaseClockModule,
    DatabaseModule,
    DurableWorkModule,
    TransactionsModule,
    CatalogSyncModule,
    PaginationModule,
  ],
  controllers: [CheckoutController],
  providers: [
    CheckoutService,
    CheckoutDriver,
    OrderRepository,
    OrderFiguresRepository,
    OrderCommitter,
    OrderAttempt,
    OrderTracker,
    OrderSettlement,
    CheckoutIntegrator,
    CheckoutLedgerHooks,
    CheckoutMetrics,
    CheckoutWorker,
  ],
  exports: [CheckoutService],
})
export class CheckoutModule {}
