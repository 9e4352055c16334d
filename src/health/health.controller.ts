import { Controller, Get, Optional } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService, type HealthCheckResult } from '@nestjs/terminus';
import { Public } from '../auth/access.decorators';
import { AppError } from '../common/app-error';
import { ApiErrorResponse } from '../common/openapi';
import { AppConfig } from '../config/app.config';
import { UpstreamHealthIndicator } from '../upstream/upstream.health';
import { DatabaseHealthIndicator } from './database.health';
import { DrainState } from './drain.state';
import { MigrationsHealthIndicator } from './migrations.health';
import { SyncHealthIndicator } from './sync.health';

@ApiTags('operations')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: DatabaseHealthIndicator,
    private readonly migrations: MigrationsHealthIndicator,
    private readonly config: AppConfig,
    private readonly sync: SyncHealthIndicator,
    private readonly drain: DrainState,
    /** Provided by the global UpstreamModule; absent (skipped) while the app runs without it. */
    @Optional() private readonly upstream?: UpstreamHealthIndicator,
  ) {}

  @Get('live')
  @ApiOperation({
    operationId: 'getLiveness',
    summary: 'Liveness: the process is up and serving HTTP (checks nothing else; stays 200 while draining)',
  })
  @ApiOkResponse({
    schema: {
      type: 'object',
      properties: { status: { type: 'string', enum: ['ok'] } },
      example: { status: 'ok' },
    },
  })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  // Terminus would document its own 503 body; the filter wraps it in ErrorResponse (documented below).
  @HealthCheck({ swaggerDocumentation: false })
  @ApiOperation({
    operationId: 'getReadiness',
    summary:
      'Readiness: database reachable, all migrations applied, upstream key accepted, catalog mirror synced; 503 from the moment shutdown begins',
  })
  @ApiOkResponse({
    description: 'Every check is up (Terminus report)',
    schema: {
      type: 'object',
      example: {
        status: 'ok',
        info: { database: { status: 'up' }, migrations: { status: 'up', applied: 2 } },
        error: {},
        details: { database: { status: 'up' }, migrations: { status: 'up', applied: 2 } },
      },
    },
  })
  @ApiErrorResponse(
    503,
    'SERVICE_UNAVAILABLE: message `Not ready: <dependency> down` (`details` is the full check report) or `Not ready: shutting down`',
  )
  async ready(): Promise<HealthCheckResult> {
    // Draining (docs/DEPLOY.md): fail at once, without a query, so the balancer's next probe takes us out.
    if (this.drain.draining)
      throw new AppError('SERVICE_UNAVAILABLE', 'Not ready: shutting down', undefined, 1);
    const timeout = this.config.HEALTH_CHECK_TIMEOUT_MS;
    const upstream = this.upstream;
    return await this.health.check([
      () => this.db.pingCheck('database', timeout),
      () => this.migrations.check('migrations', timeout),
      ...(upstream ? [() => upstream.check('upstream', timeout)] : []),
      () => this.sync.check('catalogSync', timeout),
    ]);
  }
}
