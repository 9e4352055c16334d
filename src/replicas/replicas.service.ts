import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { raceTimeout } from '../common/race-timeout';
import { SERVICE_VERSION } from '../common/service-version';
import { AppConfig } from '../config/app.config';
import { inBackground } from '../database/pool-gate';
import { DurableWorkService } from '../durable-work/durable-work.service';
import { logGate, type WorkerLoop } from '../durable-work/worker-loop';
import { UpstreamClient } from '../upstream/upstream.client';
import type { OwnThrottle } from '../upstream/upstream.types';
import { budgetShare, readHeartbeat } from './replica-budget';
import { ReplicasMetrics } from './replicas.metrics';
import { ServiceReplicaRepository, type ReplicaSeen } from './service-replica.repository';

/** At most one warning per this long while heartbeats fail (one a second otherwise). */
const FAILURE_LOG_EVERY_MS = 10_000;
/** The first heartbeat, before the replica serves, waits at most this long (then it starts on its own). */
const FIRST_BEAT_TIMEOUT_MS = 3_000;
/** Bound of one drain of 429s to publish (they come faster than a write only in a storm; the last one wins). */
const MAX_PUBLISHES_PER_DRAIN = 100;

/**
 * Budgets that hold across replicas (docs/SECURITY.md "Rate limits", docs/upstream-client.md "Across replicas").
 * Every REPLICA_HEARTBEAT_MS this replica writes its row in `service_replicas` and reads the others' (one
 * statement, database clock, a durable-work loop); with N live it takes budget / N of every client's rate limit
 * and of the upstream request rate. Its own upstream 429s are written to its row at once; the others' are
 * applied to its upstream limiter at each heartbeat. Nothing here is on a request's path: the guard reads a
 * number in memory.
 */
@Injectable()
export class ReplicasService implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger('Replicas');
  private readonly loop: WorkerLoop<never>;
  private readonly unsubscribe: () => void;
  private liveCount = 1;
  private readonly failureLogGate = logGate(FAILURE_LOG_EVERY_MS);
  private pending: OwnThrottle | null = null;
  private publishing: Promise<void> | null = null;

  constructor(
    private readonly repository: ServiceReplicaRepository,
    private readonly durableWork: DurableWorkService,
    private readonly upstream: UpstreamClient,
    private readonly config: AppConfig,
    private readonly metrics: ReplicasMetrics,
  ) {
    this.loop = durableWork.periodic({
      name: 'replica-heartbeat',
      intervalMs: config.REPLICA_HEARTBEAT_MS,
      run: () => this.beat(),
    });
    this.unsubscribe = upstream.onThrottled((throttle) => this.publish(throttle));
  }

  /** The replicas seen in the last `withinMs` (stopped ones marked): the status page's list. */
  seen(withinMs: number): Promise<ReplicaSeen[]> {
    return this.repository.seen(withinMs);
  }

  /** Live replicas at the last heartbeat, this one included. */
  get live(): number {
    return this.liveCount;
  }

  /**
   * This replica's part of a per-window budget that holds across replicas: budget / live replicas, rounded down
   * (at least 1). With one replica live it is the whole budget.
   */
  share(budget: number): number {
    return budgetShare(budget, this.liveCount);
  }

  /**
   * One heartbeat: write this replica's row, count the live ones, set the upstream rate share and apply the
   * others' 429s. A failed one leaves the last count and throttles in force (logged, counted).
   */
  async beat(): Promise<void> {
    let view;
    try {
      const others = await this.repository.beat(this.durableWork.instanceId, SERVICE_VERSION);
      view = readHeartbeat(others, this.config.REPLICA_DEAD_AFTER_MS);
    } catch (error) {
      this.failed(error, 'heartbeat');
      return;
    }
    if (view.live !== this.liveCount) {
      this.logger.log({ live: view.live, was: this.liveCount }, 'replicas sharing the budgets changed');
    }
    this.liveCount = view.live;
    this.metrics.live.set(view.live);
    this.upstream.setRateShare(1 / view.live);
    for (const throttle of view.throttles) this.upstream.applySharedThrottle(throttle);
  }

  /** The first heartbeat before the replica serves, so it starts with its share, not the whole budget. */
  async onApplicationBootstrap(): Promise<void> {
    await raceTimeout(this.beat(), FIRST_BEAT_TIMEOUT_MS);
  }

  /** Stops beating and says so: the others take the whole budget back at their next heartbeat. */
  async onModuleDestroy(): Promise<void> {
    this.unsubscribe();
    await this.loop.stop();
    await this.publishing;
    try {
      await this.repository.markStopped(this.durableWork.instanceId);
    } catch (error) {
      this.failed(error, 'stop');
    }
  }

  /** An own 429: written to this replica's row now (coalesced: one write in flight, then the latest). */
  private publish(throttle: OwnThrottle): void {
    const pending = this.pending;
    this.pending =
      pending === null
        ? throttle
        : { factor: throttle.factor, pauseMs: maxPause(pending.pauseMs, throttle.pauseMs) };
    this.startDrain();
  }

  private startDrain(): void {
    if (this.publishing !== null) return;
    this.publishing = inBackground(() => this.drain()).finally(() => {
      this.publishing = null;
      // A 429 that arrived after the drain's last look.
      if (this.pending !== null) this.startDrain();
    });
  }

  private async drain(): Promise<void> {
    for (let i = 0; i < MAX_PUBLISHES_PER_DRAIN && this.pending !== null; i++) {
      const { factor, pauseMs } = this.pending;
      this.pending = null;
      try {
        await this.repository.publishThrottle(this.durableWork.instanceId, factor, pauseMs);
        this.metrics.throttlesPublished.inc();
      } catch (error) {
        this.failed(error, 'publish');
      }
    }
  }

  private failed(error: unknown, what: 'heartbeat' | 'publish' | 'stop'): void {
    this.metrics.heartbeatFailures.inc();
    if (!this.failureLogGate()) return;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn({ what, reason, live: this.liveCount }, 'replica heartbeat failed; last budgets kept');
  }
}

function maxPause(a: number | undefined, b: number | undefined): number | undefined {
  return a === undefined ? b : b === undefined ? a : Math.max(a, b);
}
