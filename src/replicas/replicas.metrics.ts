import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';

/** What this replica knows of the others: how many share the budgets, and the heartbeats that failed. */
@Injectable()
export class ReplicasMetrics {
  readonly live: Gauge;
  readonly heartbeatFailures: Counter;
  readonly throttlesPublished: Counter;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.live = new Gauge({
      name: 'service_replicas_live',
      help: 'Live replicas this replica counts (itself included) at its last heartbeat: the divisor of the budgets',
      registers,
    });
    this.live.set(1);
    this.heartbeatFailures = new Counter({
      name: 'service_replica_heartbeat_failures_total',
      help: 'Statements on its heartbeat row that failed (beat, 429 publish, stop mark); the last live count stays',
      registers,
    });
    this.throttlesPublished = new Counter({
      name: 'service_replica_throttles_published_total',
      help: "Upstream 429s of this replica written to its heartbeat row for the other replicas' limiters",
      registers,
    });
  }
}
