import { Module } from '@nestjs/common';
import { CatalogSyncModule } from '../catalog-sync/catalog-sync.module';
import { CatalogSyncService } from '../catalog-sync/catalog-sync.service';
import { TransactionsModule } from '../transactions/transactions.module';
import { EVENT_REFRESHER } from './event-refresher';
import { SellingController } from './selling.controller';
import { SellingIntegrator } from './selling.integrator';
import { SellingService } from './selling.service';

/** listings/: the read API over the mirror (added by the read-API work) and selling (list / cancel). */
@Module({
  imports: [TransactionsModule, CatalogSyncModule],
  controllers: [SellingController],
  providers: [
    SellingService,
    SellingIntegrator,
    // Selling refreshes an event after a confirmed list/cancel through catalog sync's one-event pass.
    { provide: EVENT_REFRESHER, useExisting: CatalogSyncService },
  ],
  exports: [SellingService],
})
export class ListingsModule {}
