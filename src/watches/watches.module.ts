import { Module } from '@nestjs/common';
import { CatalogSyncModule } from '../catalog-sync/catalog-sync.module';
import { PaginationModule } from '../common/pagination.module';
import { WatchRepository } from './watch.repository';
import { WatchesController } from './watches.controller';
import { WatchesService } from './watches.service';

/**
 * Price watches (docs/watches.md): the `watches` and `watch_alerts` tables, the API over them. The match runs in
 * the database (triggers on `listings`, migrations/…-CreateWatchMatchTriggers.ts) and announces `watch.matched`
 * through the webhooks outbox (`outbox_append`), so this module has no background work. CatalogMirrorService
 * resolves a name search (`q`); WebhooksConfig (WATCHES_MAX_PER_CLIENT) comes from AppConfigModule.
 */
@Module({
  imports: [CatalogSyncModule, PaginationModule],
  controllers: [WatchesController],
  providers: [WatchesService, WatchRepository],
})
export class WatchesModule {}
