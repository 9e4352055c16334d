import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { CatalogSyncModule } from '../catalog-sync/catalog-sync.module';
import { DatabaseHealthIndicator } from './database.health';
import { HealthController } from './health.controller';
import { MigrationsHealthIndicator } from './migrations.health';
import { SyncHealthIndicator } from './sync.health';

@Module({
  imports: [TerminusModule.forRoot({ errorLogStyle: 'json', logger: false }), CatalogSyncModule],
  controllers: [HealthController],
  providers: [DatabaseHealthIndicator, MigrationsHealthIndicator, SyncHealthIndicator],
})
export class HealthModule {}
