import { Module } from '@nestjs/common';
import { DurableWorkMetrics } from './durable-work.metrics';
import { DurableWorkService } from './durable-work.service';
import { WorkIdentity } from './work-identity';

/**
 * Durable background work on PostgreSQL (docs/durable-work.md): leased claims with a fencing token per claim,
 * one backoff policy, one worker loop, one identity per process. Imported by checkout, transactions and
 * catalog sync; exports only its service. DataSource comes from TypeOrmModule, MetricsService from the global
 * MetricsModule.
 */
@Module({
  providers: [DurableWorkService, DurableWorkMetrics, WorkIdentity],
  exports: [DurableWorkService],
})
export class DurableWorkModule {}
