import { Controller, Get, Header } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces, ApiTags } from '@nestjs/swagger';
import { PublicIf } from '../auth/access.decorators';
import { MetricsService } from './metrics.service';

@ApiTags('operations')
// Open by default for scrapers on a private network; METRICS_PUBLIC=false requires an admin key.
@PublicIf('METRICS_PUBLIC', 'admin')
@Controller('metrics')
export class MetricsController {
  constructor(private readonly metrics: MetricsService) {}

  @Get()
  @Header('content-type', 'text/plain; version=0.0.4; charset=utf-8')
  @ApiOperation({
    operationId: 'getMetrics',
    summary: 'Prometheus metrics',
    description: 'Default process metrics and HTTP request durations.',
  })
  @ApiProduces('text/plain')
  @ApiOkResponse({ description: 'Prometheus text exposition format', schema: { type: 'string' } })
  async scrape(): Promise<string> {
    return this.metrics.render();
  }
}
