import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { DurableWorkMetrics } from './durable-work.metrics';
import { LeaseQueue, type QueueSpec } from './lease-queue';
import { fenced, type Fence } from './lease.sql';
import { NamedLeaseRepository, type Sql } from './named-lease.repository';
import { WorkIdentity } from './work-identity';
import { periodicLoop, WorkerLoop, type LoopSpec, type PeriodicSpec } from './worker-loop';

/**
 * The durable-work block (docs/durable-work.md): the only lease, claim, backoff and worker-loop code. Features
 * get from it their queue (claims on their own table, fenced by a token per claim), their worker loop, this
 * process's identity and the one backoff policy. The domain rows stay the source of truth: a queue is a way of
 * claiming them, not a second copy of the work.
 */
@Injectable()
export class DurableWorkService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('DurableWork');
  private readonly queues = new Map<string, LeaseQueue>();
  private readonly loops: WorkerLoop<unknown>[] = [];
  private claimsStopped = false;

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

  /**
   * Whether `fence` is still the current claim of its row: a holder's check before an upstream call that can move
   * money, when no write of its own carries the fence. Counts and logs a refusal.
   */
  async holds(fence: Fence, what: string): Promise<boolean> {
    const rows = await this.dataSource.query<unknown[]>(
      `SELECT 1 FROM ${fence.table} WHERE id = $1::uuid AND ${fenced('$2')}`,
      [fence.id, fence.token],
    );
    if (rows.length === 1) return true;
    this.fencedOff(fence, what);
    return false;
  }

  /** Counts and logs work of a stale holder refused by its fencing token. */
  fencedOff(fence: Fence, what: string): void {
    this.metrics.fenced.inc({ queue: fence.table });
    this.logger.warn(
      { queue: fence.table, id: fence.id, token: fence.token, what },
      'durable work fenced off (lease lost)',
    );
  }

  /**
   * A worker loop, started once the application has bootstrapped (when `spec.enabled` is not false) and stopped
   * on shutdown (claiming stops; the items in progress are awaited).
   */
  loop<T>(spec: LoopSpec<T>): WorkerLoop<T> {
    const loop = new WorkerLoop(spec, this.logger);
    if (this.claimsStopped) loop.stopClaiming();
    this.loops.push(loop);
    return loop;
  }

  /** A loop whose pass is `spec.run` and claims no items (worker-loop.ts `periodicLoop`). */
  periodic(spec: PeriodicSpec): WorkerLoop<never> {
    return this.loop(periodicLoop(spec));
  }

  /**
   * Whether background work may still be claimed on this replica: false from the shutdown drain on. A wake-up
   * outside a loop (an order woken by its final transaction) asks before it claims.
   */
  get claiming(): boolean {
    return !this.claimsStopped;
  }

  /**
   * The shutdown drain (main.ts, on SIGTERM; docs/DEPLOY.md): every loop stops claiming, its passes and wake-ups
   * alike, while the work in progress goes on and the requests still served do their own work as usual. Called by
   * the composition root, so this block knows nothing of health or readiness. Once; there is no way back.
   */
  stopClaiming(): void {
    this.claimsStopped = true;
    for (const loop of this.loops) loop.stopClaiming();
  }

  onApplicationBootstrap(): void {
    for (const loop of this.loops) if (loop.spec.enabled !== false) loop.start();
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all(this.loops.map((loop) => loop.stop()));
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
