import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CatalogSyncModule } from '../catalog-sync/catalog-sync.module';
import { PaginationModule } from '../common/pagination.module';
import { TransactionsModule } from '../transactions/transactions.module';
import { CheckoutController } from './checkout.controller';
import { CheckoutDriver } from './checkout.driver';
import { CheckoutIntegrator } from './checkout.integrator';
import { CheckoutMetrics } from './checkout.metrics';
import { CheckoutWorker } from './checkout.scheduler';
import { CheckoutService } from './checkout.service';
import { OrderEntity } from './order.entity';

/**
 * Checkout: orders bought exactly once (revalidate → sign → submit → confirm) with a recovery worker.
 * CheckoutConfig comes from AppConfigModule; UpstreamClient from the global UpstreamModule.
 */
@Module({
  imports: [TypeOrmModule.forFeature([OrderEntity]), TransactionsModule, CatalogSyncModule, PaginationModule],
  controllers: [CheckoutController],
  providers: [CheckoutService, CheckoutDriver, CheckoutIntegrator, CheckoutMetrics, CheckoutWorker],
  exports: [CheckoutService],
})
export class CheckoutModule {}
