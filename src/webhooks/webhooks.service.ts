import { Injectable } from '@nestjs/common';
import { WebhookBacklogRepository, type WebhookBacklog } from './webhook-backlog.repository';

/**
 * What other modules ask of webhooks (docs/webhooks.md). Events are not appended through it: the outbox triggers
 * of the owning tables write them in the state change's own transaction (migrations …-CreateOutboxTriggers,
 * …-CreateEndpointDisabledTrigger, …-QuietHotWalkSyncEvents; see WebhooksModule). The one figure asked of it is
 * the delivery backlog the status page shows.
 */
@Injectable()
export class WebhooksService {
  constructor(private readonly backlogs: WebhookBacklogRepository) {}

  /** The delivery backlog: totals over every endpoint, and the first 100 endpoints by oldest undelivered. */
  backlog(): Promise<WebhookBacklog> {
    return this.backlogs.backlog();
  }
}
