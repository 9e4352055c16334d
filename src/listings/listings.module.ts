import { Logger, Module } from '@nestjs/common';
import { TransactionsModule } from '../transactions/transactions.module';
import { EVENT_REFRESHER, type EventRefresher } from './event-refresher';
import { SellingController } from './selling.controller';
import { SellingIntegrator } from './selling.integrator';
import { SellingService } from './selling.service';

/** Until catalog sync is merged: a refresher that only says the mirror was not refreshed. */
const pendingCatalogSync: EventRefresher = {
  refreshEvent(eventId: bigint): Promise<void> {
    new Logger('ListingsModule').warn(
      { eventId: eventId.toString() },
      'catalog sync not wired: mirror not refreshed',
    );
    return Promise.resolve();
  },
};

/** listings/: the read API over the mirror (added by the read-API work) and selling (list / cancel). */
@Module({
  imports: [TransactionsModule],
  controllers: [SellingController],
  providers: [SellingService, SellingIntegrator, { provide: EVENT_REFRESHER, useValue: pendingCatalogSync }],
  exports: [SellingService],
})
export class ListingsModule {}
