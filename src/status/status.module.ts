import { DatabaseClockModule } from '../database/database-clock.module';
import { type DynamicModule, Module } from '@nestjs/common';
import { CatalogSyncModule } from '../catalog-sync/catalog-sync.module';
import { DurableWorkModule } from '../durable-work/durable-work.module';
import { AdminStatusController } from './admin-status.controller';
import { StatusAccess } from './status.access';
import { StatusFiguresRepository } from './status-figures.repository';
import { StatusPageController } from './status-page.controller';
import { StatusRecorder } from './status.recorder';
import { StatusSampleRepository } from './status-sample.repository';
import { StatusSessionRepository } from './status-session.repository';
import { StatusService } from './status.service';

/**
 * The operator status page and its JSON twin (docs/status.md): `GET /status` (HTML, hand-written SVG plots,
 * login), `GET /v1/admin/status`, and the recorder of the per-minute samples on a durable-work loop.
 * ApiClientsService and AuthConfig come from the global AuthModule; AppConfig and SyncConfig from
 * AppConfigModule; UpstreamClient and MetricsService from their global modules. Exports only its service.
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
      // CatalogSyncModule: the served-accuracy figures are asked of CatalogMirrorService (no SQL on its tables).
      imports: [DatabaseClockModule, DurableWorkModule, CatalogSyncModule],
      controllers: options.pageEnabled
        ? [StatusPageController, AdminStatusController]
        : [AdminStatusController],
      providers: [
        StatusService,
        StatusAccess,
        StatusRecorder,
        StatusSampleRepository,
        StatusSessionRepository,
        StatusFiguresRepository,
      ],
      exports: [StatusService],
    };
  }
}
