import { Module } from '@nestjs/common';
import { DurableWorkModule } from '../durable-work/durable-work.module';
import { ReplicasMetrics } from './replicas.metrics';
import { ReplicasService } from './replicas.service';
import { ServiceReplicaRepository } from './service-replica.repository';

/**
 * The service's replicas, seen from one of them: a heartbeat row per process in `service_replicas` (database
 * clock), the live count that divides the budgets (client rate limits in auth/, the upstream rate in upstream/)
 * and the upstream 429s every replica shares. Imported by auth/ (its rate-limit guard); UpstreamClient, AppConfig
 * and MetricsService come from global modules. Exports only its service.
 */
@Module({
  imports: [DurableWorkModule],
  providers: [ReplicasService, ServiceReplicaRepository, ReplicasMetrics],
  exports: [ReplicasService],
})
export class ReplicasModule {}
