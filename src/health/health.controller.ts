import { Controller, Get, Optional } from '@nestjs/common';
import { ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
} from '@nestjs/terminus';
import { Public } from '../auth/access.decorators';
import { AppConfig } from '../config/app.config';
import { UpstreamHealthIndicator } from '../upstream/upstream.health';
import { MigrationsHealthIndicator } from './migrations.health';

@ApiTags('operations')
@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly migrations: MigrationsHealthIndicator,
    private readonly config: AppConfig,
    /** Provided by the global UpstreamModule; absent (skipped) while the app runs without it. */
    @Optional() private readonly upstream?: UpstreamHealthIndicator,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process is up and serving HTTP (checks nothing else)' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness: database reachable, all migrations applied, upstream key accepted' })
  @ApiServiceUnavailableResponse({ description: 'A dependency is down; the body names which one' })
  ready(): Promise<HealthCheckResult> {
    const timeout = this.config.HEALTH_CHECK_TIMEOUT_MS;
    const upstream = this.upstream;
    return this.health.check([
      () => this.db.pingCheck('database').withTimeout(timeout),
      () => this.migrations.check('migrations', timeout),
      ...(upstream ? [() => upstream.check('upstream', timeout)] : []),
    ]);
  }
}
