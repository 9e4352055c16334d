import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { SyncConfig } from '../config/sync.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import type { WorkerLoop } from '../durable-work/worker-loop';
import { CatalogSyncService } from './catalog-sync.service';

type Job = 'events' | 'listings' | 'protocol-config';

/** How long shutdown waits for the loops' current runs (the service cancels running passes within 5 s). */
const STOP_WAIT_MS = 6000;

/**
 * Schedules the passes on the durable-work block's worker loops, one per job: with SYNC_ENABLED, a first
 * events and listings pass at startup (SYNC_ON_STARTUP), then each resource again SYNC_*_INTERVAL_MS plus a
 * random 0..SYNC_JITTER_MS after its previous run ended (so replicas drift apart and a slow pass never overlaps
 * its successor here; across replicas the lease keeps one pass per resource). The protocol config is refreshed
 * on its own loop.
 */
@Injectable()
export class CatalogSyncScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('CatalogSyncScheduler');
  private readonly loops: WorkerLoop<never>[] = [];
  private stopped = false;

  constructor(
    private readonly sync: CatalogSyncService,
    private readonly work: DurableWorkService,
    private readonly config: SyncConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.SYNC_ENABLED) {
      this.logger.log('SYNC_ENABLED=false: no scheduled sync passes on this replica');
      return;
    }
    const first = this.config.SYNC_ON_STARTUP;
    this.loops.push(this.loop('protocol-config', 0, 'schedule'));
    for (const job of ['events', 'listings'] as const) {
      this.loops.push(this.loop(job, first ? 0 : this.delay(job), first ? 'startup' : 'schedule'));
    }
    for (const loop of this.loops) loop.start();
  }

  /** Stops every loop and waits (bounded) for the run in progress; running passes are cancelled by the service. */
  async beforeApplicationShutdown(): Promise<void> {
    this.stopped = true;
    const stopped = Promise.allSettled(this.loops.map((loop) => loop.stop()));
    await Promise.race([stopped, new Promise((resolve) => setTimeout(resolve, STOP_WAIT_MS).unref())]);
  }

  /**
   * One job's loop. The run happens inside `claim`: the loop schedules its next tick when the claim returns, so
   * the next run comes `delay(job)` after this one ended, as the schedule requires (`work` never gets an item).
   */
  private loop(job: Job, firstDelayMs: number, firstTrigger: 'startup' | 'schedule'): WorkerLoop<never> {
    let trigger = firstTrigger;
    return this.work.periodic({
      name: `catalog-sync:${job}`,
      intervalMs: this.interval(job),
      nextDelayMs: () => this.delay(job),
      firstDelayMs,
      run: async (stopping) => {
        // The block stops the loop at shutdown: the pass run inside this claim is cancelled, not waited out.
        const cancel = (): void => void this.sync.cancelPasses();
        stopping.addEventListener('abort', cancel, { once: true });
        await this.run(job, trigger).finally(() => stopping.removeEventListener('abort', cancel));
        trigger = 'schedule';
      },
    });
  }

  private interval(job: Job): number {
    return job === 'events'
      ? this.config.SYNC_EVENTS_INTERVAL_MS
      : job === 'listings'
        ? this.config.SYNC_LISTINGS_INTERVAL_MS
        : this.config.SYNC_PROTOCOL_CONFIG_REFRESH_MS;
  }

  private delay(job: Job): number {
    return this.interval(job) + Math.floor(Math.random() * (this.config.SYNC_JITTER_MS + 1));
  }

  private async run(job: Job, trigger: 'startup' | 'schedule'): Promise<void> {
    try {
      if (job === 'protocol-config') {
        await this.sync.refreshProtocolConfig();
        return;
      }
      await this.sync.reapAbandoned();
      await this.sync.runScheduled(job, trigger);
    } catch (error) {
      if (!this.stopped) this.logger.warn({ msg: 'scheduled sync job failed', job, err: error });
    }
  }
}
