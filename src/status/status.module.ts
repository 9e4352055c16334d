import { DatabaseClockModule } from '../database/database-clock.module';
import { type DynamicModule, Module } from '@nestjs/common';
import { AuthModule } from '../auth/auth.module';
import { CatalogSyncModule } from '../catalog-sync/catalog-sync.module';
import { CheckoutModule } from '../checkout/checkout.module';
import { DurableWorkModule } from '../durable-work/durable-work.module';
import { ReplicasModule } from '../replicas/replicas.module';
import { WebhooksModule } from '../webhooks/webhooks.module';
import { AdminStatusController } from './admin-status.controller';
import { StatusAccess } from './status.access';
import { StatusFigures } from './status.figures';
import { StatusPageController } from './status-page.controller';
import { StatusRecorder } from './status.recorder';
import { StatusSampleRepository } from './status-sample.repository';
import { StatusSessionRepository } from './status-session.repository';
import { StatusService } from './status.service';

/**
 * The operator status page and its JSON twin (docs/status.md): `GET /status` (HTML, hand-written SVG plots,
 * login), `GET /v1/admin/status`, and the recorder of the per-minute samples on a durable-work loop.
 * ApiClientsService and FailedAuthLimiter come from AuthModule (login with an admin key); AppConfig, AuthConfig and
 * SyncConfig from AppConfigModule; UpstreamClient and MetricsService from their global modules. Exports only its service.
 */
@Module({})
export class StatusModule {
  /**
   * `pageEnabled` false (outside the local demo without STATUS_PAGE_ENABLED=true): the page's routes are not mounted at all,
   * so every one of them answers exactly as an unknown route does (404, same body; no validation runs). The JSON
   * twin, an admin API route, is mounted either way.
   */
  static forRoot(options: { pageEnabled: boolean }): DynamicModule {
    return {
      module: StatusModule,
      // The figures of other modules' tables are asked of their services (StatusFigures; no SQL on their tables):
      // passes of CatalogSyncService and served accuracy of CatalogMirrorService, orders of CheckoutService, the
      // delivery backlog of WebhooksService, replicas of ReplicasService.
      imports: [
        AuthModule,
        DatabaseClockModule,
        DurableWorkModule,
        CatalogSyncModule,
        CheckoutModule,
        WebhooksModule,
        ReplicasModule,
      ],
      controllers: options.pageEnabled
        ? [StatusPageController, AdminStatusController]
        : [AdminStatusController],
      providers: [
        StatusService,
        StatusAccess,
        StatusRecorder,
        StatusSampleRepository,
        StatusSessionRepository,
        StatusFigures,
      ],
      exports: [StatusService],
    };
  }
}
