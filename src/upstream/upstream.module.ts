import { HttpService } from '@nestjs/axios';
import { Global, Module, type DynamicModule } from '@nestjs/common';
import { TerminusModule } from '@nestjs/terminus';
import { UPSTREAM_OPTIONS, UpstreamClient } from './upstream.client';
import { UpstreamHealthIndicator } from './upstream.health';
import { resolveUpstreamOptions, type UpstreamOptions } from './upstream.options';
import { createUpstreamHttpService } from './upstream.transport';

/**
 * The upstream API client for the whole app (global, like the database): features inject UpstreamClient,
 * health injects UpstreamHealthIndicator. Options are resolved before the module graph exists (main.ts
 * decides between UPSTREAM_BASE_URL and the in-process sandbox), as AppModule.forRoot takes a databaseUrl.
 */
@Global()
@Module({})
export class UpstreamModule {
  static forRoot(options: UpstreamOptions): DynamicModule {
    return {
      module: UpstreamModule,
      imports: [TerminusModule],
      providers: [
        { provide: UPSTREAM_OPTIONS, useValue: options },
        // The client sends through @nestjs/axios's HttpService, built over the upstream's keep-alive agent.
        {
          provide: HttpService,
          useFactory: () => createUpstreamHttpService(resolveUpstreamOptions(options)),
        },
        UpstreamClient,
        UpstreamHealthIndicator,
      ],
      exports: [UpstreamClient, UpstreamHealthIndicator],
    };
  }
}
