import { Injectable } from '@nestjs/common';
import { CheckoutConfig } from '../config/checkout.config';
import { DurableWorkService } from '../durable-work/durable-work.service';
import type { WorkerLoop } from '../durable-work/worker-loop';
import { CheckoutDriver } from './checkout.driver';
import type { OrderEntity } from './order.entity';
import { OrderRepository } from './order.repository';

/**
 * The recovery worker, on every replica (CHECKOUT_WORKER_ENABLED), on the durable-work loop: every
 * CHECKOUT_WORKER_INTERVAL_MS it claims due orders whose lease is free or expired (durable work's claim: a lease
 * with a new fencing token, so one drive holds an order at a time), up to CHECKOUT_WORKER_BATCH drives in
 * progress, and drives each from its recovery point. Nothing is held in memory: after a crash the leases expire
 * and any replica resumes. The loop starts and stops with the application (DurableWorkService).
 */
@Injectable()
export class CheckoutWorker {
  private readonly loop: WorkerLoop<OrderEntity>;

  constructor(
    work: DurableWorkService,
    repo: OrderRepository,
    driver: CheckoutDriver,
    config: CheckoutConfig,
  ) {
    this.loop = work.loop({
      name: 'orders',
      enabled: config.CHECKOUT_WORKER_ENABLED,
      intervalMs: config.CHECKOUT_WORKER_INTERVAL_MS,
      concurrency: config.CHECKOUT_WORKER_BATCH,
      claim: (room) => repo.claimDue(config.CHECKOUT_LEASE_MS, room),
      work: (order) => driver.drive(order),
    });
  }

  /**
   * One pass: claims due orders (up to the batch size minus the worker's drives still running) and starts driving
   * them, without awaiting them (an order being tracked does not hold up the next pass). Exposed for tests.
   */
  tick(): Promise<number> {
    return this.loop.tick();
  }
}
