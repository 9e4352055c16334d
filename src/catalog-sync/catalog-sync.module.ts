import { Logger, Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import type { Pool } from 'pg';
import { DatabaseClockModule } from '../database/database-clock.module';
import { DatabaseModule, PG_POOL } from '../database/database.module';
import { DurableWorkModule } from '../durable-work/durable-work.module';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { NamedLeaseRepository } from '../durable-work/named-lease.repository';
import { CatalogMirrorRepository } from './catalog-mirror.repository';
import { CatalogMirrorService } from './catalog-mirror.service';
import { CatalogSyncController } from './catalog-sync.controller';
import { SyncMetrics } from './catalog-sync.metrics';
import { CatalogSyncScheduler } from './catalog-sync.scheduler';
import { CatalogSyncService } from './catalog-sync.service';
import { EventEntity } from './event.entity';
import { EventRepository } from './event.repository';
import { EventDemandRepository } from './event-demand.repository';
import { EventFreshnessRepository } from './event-freshness.repository';
import { HotSet } from './hot-set';
import { HotWalkScheduler } from './hot-walk.scheduler';
import { ListingEntity } from './listing.entity';
import { ListingRepository } from './listing.repository';
import { MirrorGenerationEntity } from './mirror-generation.entity';
import { MirrorGenerationRepository } from './mirror-generation.repository';
import { MirrorObservations } from './mirror-observations';
import { ProtocolConfigCache } from './protocol-config.cache';
import { ProtocolConfigEntity } from './protocol-config.entity';
import { ProtocolConfigRepository } from './protocol-config.repository';
import { ServedAccuracyMetrics } from './served-accuracy.metrics';
import { ServedAccuracySampler } from './served-accuracy.sampler';
import { SYNC_LEASE_QUEUE } from './sync-lease';
import { SyncPassEntity } from './sync-pass.entity';
import { SyncPassRepository } from './sync-pass.repository';
import { SyncPassFiguresRepository } from './sync-pass-figures.repository';
import { SYNC_HOLDER_ID, SYNC_LOGGER, SyncPassRunner, type SyncLogger } from './sync-pass.runner';
import { SyncStatus } from './sync-pass.status';

/** Pass logs as structured Nest log lines (the runner and cache log through SyncLogger so a bench can quiet them). */
function nestSyncLogger(): SyncLogger {
  const logger = new Logger('CatalogSync');
  return {
    info: (obj, msg) => logger.log({ msg, ...obj }),
    warn: (obj, msg) => logger.warn({ msg, ...obj }),
    error: (obj, msg) => logger.error({ msg, ...obj }),
  };
}

/**
 * The catalog mirror (docs/catalog-sync.md): sync passes, protocol config, mirror generation. Single-flight
 * leases, the worker loops and this process's identity come from DurableWorkModule; SyncConfig from
 * AppConfigModule; UpstreamClient from the global UpstreamModule; MetricsService from the global MetricsModule.
 */
@Module({
  imports: [
    DatabaseClockModule,
    // The pg pool: passes and the mirror's repositories run plain SQL on it, not through the ORM.
    DatabaseModule,
    DurableWorkModule,
    TypeOrmModule.forFeature([
      EventEntity,
      ListingEntity,
      SyncPassEntity,
      ProtocolConfigEntity,
      MirrorGenerationEntity,
    ]),
  ],
  controllers: [CatalogSyncController],
  providers: [
    SyncPassRepository,
    MirrorGenerationRepository,
    ProtocolConfigRepository,
    EventDemandRepository,
    EventFreshnessRepository,
    {
      provide: NamedLeaseRepository,
      useFactory: (work: DurableWorkService, pool: Pool) => work.namedLeases(pool, SYNC_LEASE_QUEUE),
      inject: [DurableWorkService, PG_POOL],
    },
    {
      provide: SYNC_HOLDER_ID,
      useFactory: (work: DurableWorkService) => work.instanceId,
      inject: [DurableWorkService],
    },
    { provide: SYNC_LOGGER, useFactory: nestSyncLogger },
    SyncMetrics,
    ServedAccuracyMetrics,
    MirrorObservations,
    ServedAccuracySampler,
    EventRepository,
    ListingRepository,
    HotSet,
    HotWalkScheduler,
    ProtocolConfigCache,
    SyncStatus,
    SyncPassRunner,
    CatalogSyncService,
    CatalogSyncScheduler,
    CatalogMirrorService,
    CatalogMirrorRepository,
    SyncPassFiguresRepository,
  ],
  exports: [CatalogSyncService, CatalogMirrorService],
})
export class CatalogSyncModule {}
