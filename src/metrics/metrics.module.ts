import { Global, Module } from '@nestjs/common';
import { MetricsController } from './metrics.controller';
import { MetricsService } from './metrics.service';

/** The process's Prometheus registry (MetricsService) and `GET /metrics`. */
// Global: one registry per process that every feature's metrics register in; importing it everywhere adds nothing.
@Global()
@Module({ controllers: [MetricsController], providers: [MetricsService], exports: [MetricsService] })
export class MetricsModule {}
