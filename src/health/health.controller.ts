import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import {
  HealthCheck,
  HealthCheckService,
  TypeOrmHealthIndicator,
  type HealthCheckResult,
} from '@nestjs/terminus';
import { AppConfig } from '../config/app.config';
import { MigrationsHealthIndicator } from './migrations.health';

@ApiTags('operations')
@Controller('health')
export class HealthController {
  constructor(
    private readonly health: HealthCheckService,
    private readonly db: TypeOrmHealthIndicator,
    private readonly migrations: MigrationsHealthIndicator,
    private readonly config: AppConfig,
  ) {}

  @Get('live')
  @ApiOperation({ summary: 'Liveness: the process is up and serving HTTP (checks nothing else)' })
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  @Get('ready')
  @HealthCheck()
  @ApiOperation({ summary: 'Readiness: database reachable and all migrations applied' })
  @ApiServiceUnavailableResponse({ description: 'A dependency is down; the body names which one' })
  ready(): Promise<HealthCheckResult> {
    const timeout = this.config.HEALTH_CHECK_TIMEOUT_MS;
    return this.health.check([
      () => this.db.pingCheck('database').withTimeout(timeout),
      () => this.migrations.check('migrations', timeout),
    ]);
  }
}
