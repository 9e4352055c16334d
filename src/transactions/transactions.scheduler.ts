import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { TransactionsConfig } from '../config/transactions.config';
import { inBackground } from '../database/pool-gate';
import { TransactionsService } from './transactions.service';

/**
 * The background tracker, on every replica: every TX_TRACKER_INTERVAL_MS it claims due rows (FOR UPDATE
 * SKIP LOCKED + a lease, so one replica works a row at a time) and works each once: repeat an unknown
 * signing with the same key, re-submit the same signed bytes, or run a pending after-final handler.
 * Nothing is held in memory: after a crash the leases expire and any replica picks the rows up.
 */
@Injectable()
export class TransactionsTracker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(TransactionsTracker.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly service: TransactionsService,
    private readonly config: TransactionsConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.config.TX_TRACKER_ENABLED) return;
    this.schedule();
  }

  /** Stops claiming and waits for the attempt in progress (its leases are released by then). */
  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /** One pass: claim a batch and work it. Exposed for tests. */
  async tick(): Promise<number> {
    const rows = await this.service.claimDue();
    await Promise.all(rows.map((row) => this.service.work(row)));
    return rows.length;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = inBackground(() => this.tick())
        .then(() => undefined)
        .catch((error: unknown) => this.logger.warn({ err: error }, 'tracker pass failed'))
        .finally(() => {
          this.running = null;
          this.schedule();
        });
    }, this.config.TX_TRACKER_INTERVAL_MS);
    this.timer.unref();
  }
}
