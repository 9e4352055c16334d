import { Injectable } from '@nestjs/common';
import { Counter, Gauge, Histogram } from 'prom-client';
import { MetricsService } from '../metrics/metrics.service';
import type { LedgerTransactionEntity } from './ledger-transaction.entity';

/**
 * Transaction metrics. Counts by kind/instruction/status, the oldest non-final age and the tracker lag are
 * read from the database on each scrape (so every replica reports the same, whole picture); time to final
 * status and tracker attempts are observed where they happen.
 */
@Injectable()
export class TransactionsMetrics {
  readonly timeToFinal: Histogram<'kind' | 'instruction' | 'status'>;
  readonly attempts: Counter<'work' | 'result'>;

  constructor(metrics: MetricsService) {
    const registers = [metrics.registry];
    this.timeToFinal = new Histogram({
      name: 'ledger_transaction_time_to_final_seconds',
      help: 'From signing to a final status (confirmed, landed_with_error, expired)',
      labelNames: ['kind', 'instruction', 'status'] as const,
      buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300],
      registers,
    });
    this.attempts = new Counter({
      name: 'ledger_transaction_tracker_attempts_total',
      help: 'Background attempts by the tracker: work (sign, submit, on_final) and result',
      labelNames: ['work', 'result'] as const,
      registers,
    });
  }

  /** Registers the scrape-time gauges, fed by `read` (one query for all three). */
  registerGauges(
    metrics: MetricsService,
    read: () => Promise<{
      counts: { kind: string; instruction: string; status: string; n: number }[];
      oldestOpenSeconds: number;
      trackerLagSeconds: number;
    }>,
  ): void {
    let pending: ReturnType<typeof read> | null = null;
    // One query per scrape, shared by the three gauges' collect callbacks.
    const snapshot = (): ReturnType<typeof read> => {
      // A failed read (database down) must not fail the whole scrape: report zeros for this one.
      pending ??= read()
        .catch(() => ({ counts: [], oldestOpenSeconds: 0, trackerLagSeconds: 0 }))
        .finally(() => setTimeout(() => (pending = null), 50).unref());
      return pending;
    };
    const gauges = [
      new Gauge({
        name: 'ledger_transactions',
        help: 'Ledger transactions by wallet kind, instruction and status (phase when not submitted)',
        labelNames: ['kind', 'instruction', 'status'] as const,
        registers: [],
        async collect() {
          const { counts } = await snapshot();
          this.reset();
          for (const c of counts)
            this.set({ kind: c.kind, instruction: c.instruction, status: c.status }, c.n);
        },
      }),
      new Gauge({
        name: 'ledger_transactions_oldest_open_age_seconds',
        help: 'Age of the oldest tracked transaction without a final status',
        registers: [],
        async collect() {
          this.set((await snapshot()).oldestOpenSeconds);
        },
      }),
      new Gauge({
        name: 'ledger_transactions_tracker_lag_seconds',
        help: 'How far the oldest due tracker work is behind its scheduled time',
        registers: [],
        async collect() {
          this.set((await snapshot()).trackerLagSeconds);
        },
      }),
    ];
    for (const gauge of gauges) metrics.registry.registerMetric(gauge);
  }

  observeFinal(record: LedgerTransactionEntity): void {
    if (!record.finalAt || !record.signedAt || !record.status) return;
    this.timeToFinal.observe(
      { kind: record.kind, instruction: record.instruction, status: record.status },
      Math.max(0, (record.finalAt.getTime() - record.signedAt.getTime()) / 1000),
    );
  }
}
