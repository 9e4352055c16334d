import { Module } from '@nestjs/common';
import { TypeOrmModule } from '@nestjs/typeorm';
import { DurableWorkMetrics } from './durable-work.metrics';
import { DurableWorkService } from './durable-work.service';
import { JobLeaseEntity } from './job-lease.entity';
import { WorkIdentity } from './work-identity';

/**
 * Durable background work on PostgreSQL (docs/durable-work.md): leased claims with a fencing token per claim,
 * one backoff policy, one worker loop, one identity per process. Imported by checkout, transactions and
 * catalog sync; exports only its service. DataSource comes from TypeOrmModule, MetricsService from the global
 * MetricsModule. It owns `job_leases` (named single-flight leases; registered so autoLoadEntities keeps it in the
 * data source's metadata as when catalog sync owned it).
 */
@Module({
  imports: [TypeOrmModule.forFeature([JobLeaseEntity])],
  providers: [DurableWorkService, DurableWorkMetrics, WorkIdentity],
  exports: [DurableWorkService],
})
export class DurableWorkModule {}
