import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';

/** How a try ended: delivered (2xx), retry (failed, due again), failed (the last try failed), refused (SSRF guard), abandoned (endpoint disabled or deleted). */
export type TryOutcome = 'delivered' | 'retry' | 'failed' | 'refused' | 'abandoned';

/**
 * Webhook metrics: tries by outcome and their latency (this replica's), and per endpoint the age of the oldest
 * event still undelivered, read from the database on each scrape (every replica reports the whole picture).
 * Labels are endpoint ids, never URLs (a URL may carry a token of the receiver's).
 */
@Injectable()
export class WebhooksMetrics {
  readonly tries: Counter<'outcome'>;
  readonly latency: Histogram<'outcome'>;

  constructor(private readonly metrics: MetricsService) {
    const registers = [metrics.registry];
    this.tries = new Counter({
      name: 'webhook_deliveries_total',
      help: 'Webhook delivery tries by outcome (delivered, retry, failed, refused, abandoned)',
      labelNames: ['outcome'] as const,
      registers,
    });
    this.latency = new Histogram({
      name: 'webhook_delivery_duration_seconds',
      help: 'Duration of one webhook send, from resolution to the response status (or the error), by outcome',
      labelNames: ['outcome'] as const,
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers,
    });
  }

  /** Registers the per-endpoint gauge, read with `read` on each scrape. */
  watchOldestUndelivered(read: () => Promise<{ endpoint_id: string; age: number }[]>): void {
    this.metrics.registry.registerMetric(
      new Gauge({
        name: 'webhook_oldest_undelivered_age_seconds',
        help: 'Per endpoint: seconds since its oldest event not yet delivered (pending deliveries) occurred',
        labelNames: ['endpoint'] as const,
        registers: [],
        async collect() {
          const rows = await read().catch(() => null);
          this.reset();
          for (const row of rows ?? []) this.set({ endpoint: row.endpoint_id }, row.age);
        },
      }),
    );
  }

  observe(outcome: TryOutcome, durationMs: number): void {
    this.tries.inc({ outcome });
    this.latency.observe({ outcome }, durationMs / 1000);
  }
}
