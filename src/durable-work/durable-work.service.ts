import { Injectable, Logger } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { backoffDelay, retryAfterOf, type BackoffSettings } from './backoff.policy';
import { DurableWorkMetrics } from './durable-work.metrics';
import { LeaseQueue, type QueueSpec } from './lease-queue';
import { NamedLeaseRepository, type Sql } from './named-lease.repository';
import { WorkIdentity } from './work-identity';
import { WorkerLoop, type LoopSpec } from './worker-loop';

/**
 * The durable-work block (docs/durable-work.md): the only lease, claim, backoff and worker-loop code. Features
 * get from it their queue (claims on their own table, fenced by a token per claim), their worker loop, this
 * process's identity and the one backoff policy. The domain rows stay the source of truth: a queue is a way of
 * claiming them, not a second copy of the work.
 */
@Injectable()
export class DurableWorkService {
  private readonly logger = new Logger('DurableWork');
  private readonly queues = new Map<string, LeaseQueue>();

  constructor(
    private readonly dataSource: DataSource,
    private readonly identity: WorkIdentity,
    private readonly metrics: DurableWorkMetrics,
  ) {}

  /** This process's name in leases and audit rows (one per process; never a fence: tokens are). */
  get instanceId(): string {
    return this.identity.instanceId;
  }

  /** The queue over `spec.table` (one per name). */
  queue(spec: QueueSpec): LeaseQueue {
    let queue = this.queues.get(spec.name);
    if (!queue) {
      queue = new LeaseQueue(spec, this.dataSource, this.identity.instanceId, this.metrics, this.logger);
      this.queues.set(spec.name, queue);
    }
    return queue;
  }

  /** A worker loop (the caller starts it on bootstrap and stops it on shutdown). */
  loop<T>(spec: LoopSpec<T>): WorkerLoop<T> {
    return new WorkerLoop(spec, this.logger);
  }

  /**
   * The delay before an item's next try: the one policy (exponential, full jitter, Retry-After honoured up to
   * the queue's cap) after `failures` failed tries; `error` may carry the Retry-After.
   */
  backoff(settings: BackoffSettings, failures: number, error?: unknown): number {
    return backoffDelay(settings, failures, error === undefined ? 0 : retryAfterOf(error));
  }

  /**
   * The single-flight named leases (`job_leases`: one holder of a name across replicas, a fencing token per
   * acquisition) on `sql` (a pg pool), counted in the block's metrics under `queue`: claimed, expired (a takeover
   * of an expired lease), fenced (a stale holder's write or renewal refused) and released.
   */
  namedLeases(sql: Sql, queue: string): NamedLeaseRepository {
    return new NamedLeaseRepository(sql, { metrics: this.metrics, queue, logger: this.logger });
  }
}
