import { HttpService } from '@nestjs/axios';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { createUpstreamHttpService, httpServiceTransport, UpstreamAttempt } from './http/attempt';
import { UpstreamMetrics } from './http/metrics';
import { RetryLoop } from './http/retry-loop';
import { UpstreamClient } from './upstream.client';
import { UpstreamKeyCheck } from './upstream.key-check';
import { UpstreamHealthIndicator } from './upstream.health';
import { resolveUpstreamOptions, type UpstreamOptions } from './upstream.options';
import { UPSTREAM_OPTIONS, UPSTREAM_TRANSPORT } from './upstream.tokens';

/**
 * The upstream API client for the whole app: features inject UpstreamClient,
 * health injects UpstreamHealthIndicator. Options are resolved before the module graph exists (main.ts
 * decides between UPSTREAM_BASE_URL and the in-process sandbox), as AppModule.forRoot takes a databaseUrl.
 */
// Global: one client per process (its breaker, bulkhead and rate limit are process-wide), configured once by
// forRoot at the root; most features call the upstream, and a feature cannot re-import a forRoot module.
@Global()
@Module({})
export class UpstreamModule {
  static forRoot(options: UpstreamOptions): DynamicModule {
    // Resolved once: the client and its HttpService read the same object.
    const resolved = resolveUpstreamOptions(options);
    return {
      module: UpstreamModule,
      imports: [TerminusModule],
      providers: [
        { provide: UPSTREAM_OPTIONS, useValue: resolved },
        // The client sends through @nestjs/axios's HttpService, built over the upstream's keep-alive agent.
        { provide: HttpService, useFactory: () => createUpstreamHttpService(resolved) },
        {
          provide: UPSTREAM_TRANSPORT,
          useFactory: (http: HttpService) => httpServiceTransport(http, resolved.apiKey),
          inject: [HttpService],
        },
        // One of each per process: the breaker and bulkhead (attempt), the rate limiter and the last 401 (loop).
        UpstreamMetrics,
        UpstreamAttempt,
        RetryLoop,
        UpstreamKeyCheck,
        UpstreamClient,
        UpstreamHealthIndicator,
      ],
      exports: [UpstreamClient, UpstreamHealthIndicator],
    };
  }
}
