import { Injectable } from '@nestjs/common';
import { Gauge, Histogram } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import type { OrderEntity } from './order.entity';

/**
 * Checkout metrics. Orders by state and the oldest non-final order's age are read from the database on each
 * scrape (every replica reports the whole picture); time to final state and attempts per order are observed
 * where an order becomes final.
 */
@Injectable()
export class CheckoutMetrics {
  readonly timeToFinal: Histogram<'state'>;
  readonly attempts: Histogram<'state'>;

  constructor(private readonly metrics: MetricsService) {
    const registers = [metrics.registry];
    this.timeToFinal = new Histogram({
      name: 'checkout_order_time_to_final_seconds',
      help: 'From order creation to its final state (confirmed, landed_with_error, rejected, failed)',
      labelNames: ['state'] as const,
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60, 120, 300],
      registers,
    });
    this.attempts = new Histogram({
      name: 'checkout_order_attempts',
      help: 'Attempts an order needed, observed when it became final',
      labelNames: ['state'] as const,
      buckets: [1, 2, 3, 4, 5, 10],
      registers,
    });
  }

  registerGauges(
    read: () => Promise<{ counts: { state: string; n: number }[]; oldestOpenSeconds: number }>,
  ): void {
    let pending: ReturnType<typeof read> | null = null;
    const snapshot = (): ReturnType<typeof read> => {
      pending ??= read().finally(() => setTimeout(() => (pending = null), 50).unref());
      return pending;
    };
    this.metrics.registry.registerMetric(
      new Gauge({
        name: 'checkout_orders',
        help: 'Checkout orders by state',
        labelNames: ['state'] as const,
        registers: [],
        async collect() {
          const { counts } = await snapshot();
          this.reset();
          for (const c of counts) this.set({ state: c.state }, c.n);
        },
      }),
    );
    this.metrics.registry.registerMetric(
      new Gauge({
        name: 'checkout_oldest_open_order_age_seconds',
        help: 'Age of the oldest order not yet in a final state',
        registers: [],
        async collect() {
          this.set((await snapshot()).oldestOpenSeconds);
        },
      }),
    );
  }

  observeFinal(order: OrderEntity): void {
    if (!order.finalAt) return;
    const seconds = Math.max(0, (order.finalAt.getTime() - order.createdAt.getTime()) / 1000);
    this.timeToFinal.observe({ state: order.state }, seconds);
    this.attempts.observe({ state: order.state }, order.attempt);
  }
}
