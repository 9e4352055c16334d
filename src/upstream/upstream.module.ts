import { HttpService } from '@nestjs/axios';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { createUpstreamHttpService } from './http/attempt';
import { UPSTREAM_OPTIONS, UpstreamClient } from './upstream.client';
import { UpstreamHealthIndicator } from './upstream.health';
import { resolveUpstreamOptions, type UpstreamOptions } from './upstream.options';

/**
 * The upstream API client for the whole app (global, like the database): features inject UpstreamClient,
 * health injects UpstreamHealthIndicator. Options are resolved before the module graph exists (main.ts
 * decides between UPSTREAM_BASE_URL and the in-process sandbox), as AppModule.forRoot takes a databaseUrl.
 */
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
        UpstreamClient,
        UpstreamHealthIndicator,
      ],
      exports: [UpstreamClient, UpstreamHealthIndicator],
    };
  }
}
