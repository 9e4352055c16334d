import { DatabaseClockModule } from '../database/database-clock.module';
import { Module } from '@nestjs/common';
import { CatalogSyncModule } from '../catalog-sync/catalog-sync.module';
import { CatalogSyncService } from '../catalog-sync/catalog-sync.service';
import { PaginationModule } from '../common/pagination.module';
import { ListingsConfig } from '../config/listings.config';
import { SyncConfig } from '../config/sync.config';
import { TransactionsModule } from '../transactions/transactions.module';
import { EVENT_REFRESHER } from './event-refresher';
import { EventsController } from './events.controller';
import { ListingsController } from './listings.controller';
import { ListingBatchReader } from './listing-batch.reader';
import { ListingPageBatchReader } from './listing-page-batch.reader';
import { ListingsService } from './listings.service';
import { MirrorRefreshHandler } from './mirror-refresh.handler';
import { MIRROR_STATE_REFRESH_MS, MirrorStateTracker } from './mirror-state.tracker';
import { READ_API_SETTINGS, readApiSettings, type ReadApiSettings } from './read-api.settings';
import { ReadAnswers } from './read-answers';
import { SellingController } from './selling.controller';
import { SellingIntegrator } from './selling.integrator';
import { SellingService } from './selling.service';

/**
 * listings/: the read API over the mirror (events, listings, exact money, freshness, conditional GET, the
 * exact response cache; docs/read-api.md), selling (list / cancel) and the mirror refresh after a confirmed
 * list, cancel or buy signed through any route (MirrorRefreshHandler). ListingsConfig and SyncConfig come
 * from AppConfigModule.
 */
@Module({
  imports: [TransactionsModule, CatalogSyncModule, DatabaseClockModule, PaginationModule],
  controllers: [SellingController, EventsController, ListingsController],
  providers: [
    SellingService,
    SellingIntegrator,
    // A confirmed list / cancel / buy, whichever route signed it, refreshes its events through catalog sync's
    // one-event pass (the after-final handler listings.refresh-event).
    MirrorRefreshHandler,
    { provide: EVENT_REFRESHER, useExisting: CatalogSyncService },
    {
      provide: READ_API_SETTINGS,
      useFactory: (config: ListingsConfig, sync: SyncConfig) => readApiSettings(config, sync),
      inject: [ListingsConfig, SyncConfig],
    },
    {
      provide: MIRROR_STATE_REFRESH_MS,
      useFactory: (settings: ReadApiSettings) => settings.stateRefreshMs,
      inject: [READ_API_SETTINGS],
    },
    // The read path's parts: mirror state (ListingsService starts and stops it), answers and their cache,
    // single-listing reads batched per event-loop turn.
    MirrorStateTracker,
    ReadAnswers,
    ListingBatchReader,
    ListingPageBatchReader,
    ListingsService,
  ],
  exports: [SellingService, ListingsService],
})
export class ListingsModule {}
