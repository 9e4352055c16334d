import { Injectable } from '@nestjs/common';
import { Counter, Gauge } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';

/**
 * The durable-work block's metrics, labelled by queue (`orders`, `ledger_transactions`, `sync`): rows claimed,
 * handed back, expired leases taken over, stale writes refused by their fencing token, and the age of the oldest
 * due row nobody holds (read from the database on each scrape, so every replica reports the whole picture).
 */
@Injectable()
export class DurableWorkMetrics {
  readonly claimed: Counter<'queue'>;
  readonly released: Counter<'queue'>;
  readonly expired: Counter<'queue'>;
  readonly fenced: Counter<'queue'>;
  readonly oldestDueAge: Gauge<'queue'>;
  private readonly oldestDue = new Map<string, () => Promise<number>>();

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.claimed = new Counter({
      name: 'durable_work_claimed_total',
      help: 'Rows claimed by this replica (a lease with a new fencing token), by queue',
      labelNames: ['queue'] as const,
      registers,
    });
    this.released = new Counter({
      name: 'durable_work_released_total',
      help: 'Rows handed back by this replica (lease dropped, due again later), by queue',
      labelNames: ['queue'] as const,
      registers,
    });
    this.expired = new Counter({
      name: 'durable_work_expired_leases_total',
      help: 'Claims by this replica that took over an expired lease of another holder, by queue',
      labelNames: ['queue'] as const,
      registers,
    });
    this.fenced = new Counter({
      name: 'durable_work_fenced_total',
      help: 'Writes or upstream calls of this replica refused because its fencing token was no longer current',
      labelNames: ['queue'] as const,
      registers,
    });
    const ages = this.oldestDue;
    this.oldestDueAge = new Gauge({
      name: 'durable_work_oldest_due_age_seconds',
      help: 'Age of the oldest due row whose lease is free (how far behind the workers are), by queue',
      labelNames: ['queue'] as const,
      registers,
      async collect() {
        this.reset();
        for (const [queue, read] of ages) {
          const age = await read().catch(() => null);
          if (age !== null) this.set({ queue }, age);
        }
      },
    });
  }

  /** Registers the oldest-due-age reader of a queue (one per queue name). */
  watchOldestDue(queue: string, read: () => Promise<number>): void {
    this.oldestDue.set(queue, read);
  }
}
