import { Module } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { CatalogSyncModule } from '../catalog-sync/catalog-sync.module';
import { DatabaseHealthIndicator } from './database.health';
import { DrainState } from './drain.state';
import { HealthController } from './health.controller';
import { MigrationsHealthIndicator } from './migrations.health';
import { SyncHealthIndicator } from './sync.health';

@Module({
  imports: [TerminusModule.forRoot({ errorLogStyle: 'json', logger: false }), CatalogSyncModule],
  controllers: [HealthController],
  // DrainState is flipped by main.ts and app.factory.ts through app.get() (the composition root), not imported.
  providers: [DatabaseHealthIndicator, MigrationsHealthIndicator, SyncHealthIndicator, DrainState],
})
export class HealthModule {}
