import {
  Injectable,
  Logger,
  type BeforeApplicationShutdown,
  type OnApplicationBootstrap,
} from '@nestjs/common';
import { SchedulerRegistry } from '@nestjs/schedule';
import { SyncConfig } from '../config/sync.config';
import { CatalogSyncService } from './catalog-sync.service';

type Job = 'events' | 'listings' | 'protocol-config';

/**
 * Schedules the passes with @nestjs/schedule's registry: with SYNC_ENABLED, a first events and listings pass
 * at startup (SYNC_ON_STARTUP), then each resource again SYNC_*_INTERVAL_MS plus a random 0..SYNC_JITTER_MS
 * after its previous run ended (so replicas drift apart and a slow pass never overlaps its successor here;
 * across replicas the lease keeps one pass per resource). The protocol config is refreshed on its own timer.
 */
@Injectable()
export class CatalogSyncScheduler implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('CatalogSyncScheduler');
  private stopped = false;

  constructor(
    private readonly sync: CatalogSyncService,
    private readonly registry: SchedulerRegistry,
    private readonly config: SyncConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.SYNC_ENABLED) {
      this.logger.log('SYNC_ENABLED=false: no scheduled sync passes on this replica');
      return;
    }
    const first = this.config.SYNC_ON_STARTUP;
    this.schedule('protocol-config', 0);
    this.schedule('events', first ? 0 : this.delay('events'), first ? 'startup' : 'schedule');
    this.schedule('listings', first ? 0 : this.delay('listings'), first ? 'startup' : 'schedule');
  }

  beforeApplicationShutdown(): void {
    this.stopped = true;
    for (const name of this.registry.getTimeouts()) {
      if (name.startsWith('catalog-sync:')) this.registry.deleteTimeout(name);
    }
  }

  private delay(job: Job): number {
    const base =
      job === 'events'
        ? this.config.SYNC_EVENTS_INTERVAL_MS
        : job === 'listings'
          ? this.config.SYNC_LISTINGS_INTERVAL_MS
          : this.config.SYNC_PROTOCOL_CONFIG_REFRESH_MS;
    return base + Math.floor(Math.random() * (this.config.SYNC_JITTER_MS + 1));
  }

  private schedule(job: Job, delayMs: number, trigger: 'startup' | 'schedule' = 'schedule'): void {
    if (this.stopped) return;
    const name = `catalog-sync:${job}`;
    if (this.registry.doesExist('timeout', name)) this.registry.deleteTimeout(name);
    const timer = setTimeout(() => {
      this.registry.deleteTimeout(name);
      void this.run(job, trigger).finally(() => this.schedule(job, this.delay(job)));
    }, delayMs);
    timer.unref();
    this.registry.addTimeout(name, timer);
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
