import type { DataSource } from 'typeorm';
import { DurableWorkMetrics } from '../../src/durable-work/durable-work.metrics';
import { DurableWorkService } from '../../src/durable-work/durable-work.service';
import { WorkIdentity } from '../../src/durable-work/work-identity';
import { MetricsService } from '../../src/metrics/metrics.service';

/**
 * The durable-work block over a test data source, outside Nest (repository specs): each call is another
 * "process" (its own identity and metrics), as two replicas' repositories would be.
 */
export function durableWorkFor(dataSource: DataSource): DurableWorkService {
  return new DurableWorkService(dataSource, new WorkIdentity(), new DurableWorkMetrics(new MetricsService()));
}
