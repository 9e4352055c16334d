import { Injectable, Logger, type OnApplicationBootstrap, type OnModuleDestroy } from '@nestjs/common';
import { inBackground } from '../database/pool-gate';
import { CheckoutConfig } from '../config/checkout.config';
import { CheckoutDriver } from './checkout.driver';

/**
 * The recovery worker, on every replica: every CHECKOUT_WORKER_INTERVAL_MS it claims due orders whose lease is
 * free or expired (FOR UPDATE SKIP LOCKED + a lease, so one replica drives an order at a time) and drives each
 * from its recovery point. Nothing is held in memory: after a crash the leases expire and any replica resumes.
 */
@Injectable()
export class CheckoutWorker implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(CheckoutWorker.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private stopped = false;
  /** Drives this worker started that are still running. */
  private readonly drives = new Set<Promise<void>>();

  constructor(
    private readonly driver: CheckoutDriver,
    private readonly config: CheckoutConfig,
  ) {}

  onApplicationBootstrap(): void {
    if (this.config.CHECKOUT_WORKER_ENABLED) this.schedule();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  /**
   * One pass: claim due orders (up to the batch size minus the worker's drives still running) and start
   * driving them. Drives are not awaited, so an order being tracked does not hold up the next pass; the driver
   * awaits them on shutdown. Exposed for tests.
   */
  async tick(): Promise<number> {
    const room = this.config.CHECKOUT_WORKER_BATCH - this.drives.size;
    if (room <= 0) return 0;
    const orders = await this.driver.repo.claimDue(
      this.driver.instanceId,
      this.config.CHECKOUT_LEASE_MS,
      room,
    );
    for (const order of orders) {
      const drive = this.driver.drive(order);
      this.drives.add(drive);
      void drive.finally(() => this.drives.delete(drive));
    }
    return orders.length;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.running = inBackground(() => this.tick())
        .catch((error: unknown) => this.logger.warn({ err: error }, 'checkout worker pass failed'))
        .finally(() => {
          this.running = null;
          this.schedule();
        });
    }, this.config.CHECKOUT_WORKER_INTERVAL_MS);
    this.timer.unref();
  }
}
