import { Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { PaginationModule } from '../common/pagination.module';
import { AuthConfig } from '../config/auth.config';
import { WebhooksConfig } from '../config/webhooks.config';
import { DurableWorkModule } from '../durable-work/durable-work.module';
import { AddressPolicy, WEBHOOKS_PRODUCTION } from './address.policy';
import { DeliveryWorker } from './delivery.worker';
import { HostResolver } from './host.resolver';
import { NotificationsController } from './notifications.controller';
import { NotificationsService } from './notifications.service';
import { OutboxPruner } from './outbox.pruner';
import { OutboxRepository } from './outbox.repository';
import { RevokedKeyEndpoints } from './revoked-key-endpoints';
import { SecretBox } from './secret-box';
import { WebhookBacklogRepository } from './webhook-backlog.repository';
import { WebhookDeliveryLogRepository } from './webhook-delivery-log.repository';
import { WebhookDeliveryRepository } from './webhook-delivery.repository';
import { WebhookEndpointRepository } from './webhook-endpoint.repository';
import { WebhookEndpointsController } from './webhook-endpoints.controller';
import { WebhookEndpointsService } from './webhook-endpoints.service';
import { WebhookSender } from './webhook.sender';
import { WebhooksMetrics } from './webhooks.metrics';
import { WebhooksService } from './webhooks.service';

/**
 * Webhooks (docs/webhooks.md): the transactional outbox, endpoints, Standard Webhooks delivery on the durable-work
 * block, the delivery log and the catch-up feed. No module appends events: row triggers on the owning tables write
 * the outbox in the state change's own transaction, each through the SQL function `outbox_append` —
 * `orders_outbox_created` / `orders_outbox_state` on `orders`, `ledger_transactions_outbox_final` on
 * `ledger_transactions`, `sync_passes_outbox_finished` on `sync_passes` (migrations …-CreateOutboxTriggers, its WHEN
 * narrowed by …-QuietHotWalkSyncEvents) and `webhook_endpoints_outbox_disabled` on `webhook_endpoints`
 * (…-CreateEndpointDisabledTrigger). WebhooksService, the only export, answers the status page's delivery backlog. Sends to marketplace receivers with node:http(s) (WebhookSender): the one outbound HTTP besides
 * upstream/. WebhooksConfig and AuthConfig come from AppConfigModule, ApiClientsService (RevokedKeyEndpoints listens to its
 * revocations) from AuthModule, MetricsService from the global MetricsModule.
 */
@Module({
  imports: [AuthModule, DurableWorkModule, PaginationModule],
  controllers: [WebhookEndpointsController, NotificationsController],
  providers: [
    WebhooksService,
    WebhookEndpointsService,
    NotificationsService,
    OutboxRepository,
    WebhookEndpointRepository,
    WebhookDeliveryRepository,
    WebhookDeliveryLogRepository,
    WebhookBacklogRepository,
    RevokedKeyEndpoints,
    DeliveryWorker,
    OutboxPruner,
    WebhookSender,
    HostResolver,
    WebhooksMetrics,
    {
      provide: WEBHOOKS_PRODUCTION,
      useFactory: (config: WebhooksConfig) => config.production,
      inject: [WebhooksConfig],
    },
    AddressPolicy,
    {
      provide: SecretBox,
      useFactory: (config: WebhooksConfig, auth: AuthConfig) =>
        SecretBox.from(config.WEBHOOKS_SECRET_KEY, auth.pepper),
      inject: [WebhooksConfig, AuthConfig],
    },
  ],
  exports: [WebhooksService],
})
export class WebhooksModule {}
