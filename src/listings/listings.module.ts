import { Module } from '@nestjs/common';
import { CatalogSyncModule } from '../catalog-sync/catalog-sync.module';
import { PaginationModule } from '../common/pagination.module';
import { ListingsConfig } from '../config/listings.config';
import { SyncConfig } from '../config/sync.config';
import { EventsController } from './events.controller';
import { ListingsController } from './listings.controller';
import { ListingsService } from './listings.service';
import { READ_API_SETTINGS, readApiSettings } from './read-api.settings';

/**
 * The marketplace's listings API: the read half over the mirror (events, listings, exact money,
 * freshness, conditional GET, the exact response cache; docs/read-api.md). ListingsConfig and
 * SyncConfig come from AppConfigModule.
 */
@Module({
  imports: [CatalogSyncModule, PaginationModule],
  controllers: [EventsController, ListingsController],
  providers: [
    {
      provide: READ_API_SETTINGS,
      useFactory: (config: ListingsConfig, sync: SyncConfig) => readApiSettings(config, sync),
      inject: [ListingsConfig, SyncConfig],
    },
    ListingsService,
  ],
  exports: [ListingsService],
})
export class ListingsModule {}
