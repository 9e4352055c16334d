import { Injectable, Logger } from '@nestjs/common';
import { WebhooksConfig } from '../config/webhooks.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import type { WorkerLoop } from '../durable-work/worker-loop';
import { OutboxRepository, PRUNE_BATCH } from './outbox.repository';

/** Batches one pass deletes at most (a backlog is worked off over the next passes). */
export const PRUNE_MAX_BATCHES = 100;

/**
 * Retention (WEBHOOKS_RETENTION_DAYS): every WEBHOOKS_PRUNE_INTERVAL_MS a durable-work loop deletes the events
 * older than the retention, in batches of PRUNE_BATCH, with their deliveries, and moves the feed's horizon (a
 * cursor below it is 410). Replicas may prune at the same time: each batch deletes a prefix of the feed order
 * and the horizon only moves forward, so a concurrent batch finds less to do, never something wrong.
 */
@Injectable()
export class OutboxPruner {
  private readonly logger = new Logger('Webhooks');
  private readonly loop: WorkerLoop<never>;

  constructor(
    private readonly outbox: OutboxRepository,
    private readonly config: WebhooksConfig,
    work: DurableWorkService,
  ) {
    this.loop = work.periodic({
      name: 'webhooks:prune',
      enabled: config.WEBHOOKS_WORKER_ENABLED,
      intervalMs: config.WEBHOOKS_PRUNE_INTERVAL_MS,
      run: async (stopping) => {
        await this.prune(stopping);
      },
    });
  }

  /** One pass; returns how many events it deleted. */
  async prune(stopping?: AbortSignal): Promise<number> {
    let deleted = 0;
    for (let batch = 0; batch < PRUNE_MAX_BATCHES; batch++) {
      if (stopping?.aborted) break;
      const n = await this.outbox.pruneBatch(this.config.WEBHOOKS_RETENTION_DAYS);
      deleted += n;
      if (n < PRUNE_BATCH) break;
    }
    if (deleted > 0)
      this.logger.log({ deleted, retentionDays: this.config.WEBHOOKS_RETENTION_DAYS }, 'outbox pruned');
    return deleted;
  }

  tick(): Promise<number> {
    return this.loop.tick();
  }
}
