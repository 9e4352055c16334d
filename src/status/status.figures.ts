import { Injectable } from '@nestjs/common';
import { CatalogSyncService } from '../catalog-sync/catalog-sync.service';
import type { PassFigure } from '../catalog-sync/sync-pass-figures.repository';
import { CheckoutService } from '../checkout/checkout.service';
import type { FinalCount, OpenOrder } from '../checkout/order-figures.repository';
import { DatabaseClock } from '../database/database-clock';
import { ReplicasService } from '../replicas/replicas.service';
import type { ReplicaSeen } from '../replicas/service-replica.repository';
import type { WebhookBacklog } from '../webhooks/webhook-backlog.repository';
import { WebhooksService } from '../webhooks/webhooks.service';
import { MINUTE_MS, orderFigures, type MinuteFigures } from './status.aggregation';

export type { PassFigure as PassRow, FinalCount, OpenOrder, ReplicaSeen, WebhookBacklog };
export type { EndpointBacklog } from '../webhooks/webhook-backlog.repository';

/**
 * The status page's figures, each asked of the module that owns its table (docs/status.md "Where the figures come
 * from"): passes of CatalogSyncService (`sync_passes`), orders of CheckoutService (`orders`), the delivery backlog
 * of WebhooksService (`webhook_deliveries`), replicas of ReplicasService (`service_replicas`). Status names only its
 * own tables in SQL (`npm run lint:deps`); each owner's statement is read-only and bounded.
 */
@Injectable()
export class StatusFigures {
  constructor(
    private readonly clock: DatabaseClock,
    private readonly sync: CatalogSyncService,
    private readonly checkout: CheckoutService,
    private readonly webhooks: WebhooksService,
    private readonly replicas: ReplicasService,
  ) {}

  /** The database clock (epoch ms; `DatabaseClock`, no round trip): the page's "now", as every stamp it compares with. */
  now(): Promise<number> {
    return Promise.resolve(this.clock.nowMs());
  }

  lastPasses(): Promise<PassFigure[]> {
    return this.sync.lastPasses();
  }

  lastCompletedPasses(): Promise<PassFigure[]> {
    return this.sync.lastCompletedPasses();
  }

  passesSince(from: number): Promise<PassFigure[]> {
    return this.sync.passesSince(from);
  }

  openByState(): Promise<Record<string, number>> {
    return this.checkout.openByState();
  }

  oldestOpen(): Promise<OpenOrder | null> {
    return this.checkout.oldestOpen();
  }

  finalCounts(from: number, to: number): Promise<FinalCount[]> {
    return this.checkout.finalCounts(from, to);
  }

  finalDurations(from: number, to: number): Promise<number[]> {
    return this.checkout.finalDurations(from, to);
  }

  webhookBacklog(): Promise<WebhookBacklog> {
    return this.webhooks.backlog();
  }

  replicasSeen(withinMs: number): Promise<ReplicaSeen[]> {
    return this.replicas.seen(withinMs);
  }
}

/**
 * One minute's order figures (counts uncapped, the durations' sample) — what the recorder stores for a settled
 * minute and what the report computes live for the minutes not stored yet.
 */
export async function minuteOrderFigures(
  figures: Pick<StatusFigures, 'finalCounts' | 'finalDurations'>,
  minute: number,
): Promise<MinuteFigures> {
  const counts = await figures.finalCounts(minute, minute + MINUTE_MS);
  const durations = await figures.finalDurations(minute, minute + MINUTE_MS);
  return orderFigures(minute, counts, durations);
}
