import { Module } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { TypeOrmModule } from '@nestjs/typeorm';
import { CatalogMirrorRepository } from './catalog-mirror.repository';
import { CatalogMirrorService } from './catalog-mirror.service';
import { CatalogSyncController } from './catalog-sync.controller';
import { CatalogSyncScheduler } from './catalog-sync.scheduler';
import { CatalogSyncService } from './catalog-sync.service';
import { EventEntity } from './event.entity';
import { JobLeaseEntity } from './job-lease.entity';
import { ListingEntity } from './listing.entity';
import { MirrorGenerationEntity } from './mirror-generation.entity';
import { ProtocolConfigEntity } from './protocol-config.entity';
import { SyncPassEntity } from './sync-pass.entity';

/**
 * The catalog mirror (docs/catalog-sync.md): sync passes, leases, protocol config, mirror generation.
 * SyncConfig comes from AppConfigModule; UpstreamClient from the global UpstreamModule.
 */
@Module({
  imports: [
    ScheduleModule.forRoot(),
    TypeOrmModule.forFeature([
      EventEntity,
      ListingEntity,
      SyncPassEntity,
      JobLeaseEntity,
      ProtocolConfigEntity,
      MirrorGenerationEntity,
    ]),
  ],
  controllers: [CatalogSyncController],
  providers: [CatalogSyncService, CatalogSyncScheduler, CatalogMirrorService, CatalogMirrorRepository],
  exports: [CatalogSyncService, CatalogMirrorService],
})
export class CatalogSyncModule {}
