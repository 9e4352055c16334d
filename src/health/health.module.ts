import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { CatalogSyncModule } from '../catalog-sync/catalog-sync.module';
import { HealthController } from './health.controller';
import { MigrationsHealthIndicator } from './migrations.health';
import { SyncHealthIndicator } from './sync.health';

@Module({
  imports: [TerminusModule.forRoot({ errorLogStyle: 'json', logger: false }), CatalogSyncModule],
  controllers: [HealthController],
  providers: [MigrationsHealthIndicator, SyncHealthIndicator],
})
export class HealthModule {}
