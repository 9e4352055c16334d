import { Module } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { ThrottlerModule } from '@nestjs/throttler';
import { TypeOrmModule } from '@nestjs/typeorm';
import { PaginationModule } from '../common/pagination.module';
import { AuthConfig } from '../config/auth.config';
import { ReplicasModule } from '../replicas/replicas.module';
import { AccessGuard } from './access.guard';
import { AdminApiClientsController } from './admin-api-clients.controller';
import { ApiClientEntity } from './api-client.entity';
import { ApiClientRepository } from './api-client.repository';
import { API_KEY_PEPPER, ApiClientsService } from './api-clients.service';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { AuthBootstrap } from './auth.bootstrap';
import { AuthController } from './auth.controller';
import { ClientThrottlerGuard } from './client-throttler.guard';
import { FailedAuthLimiter } from './failed-auth.limiter';
import { RateLimitStoreModule, SlidingWindowThrottlerStorage } from './sliding-window.storage';

/**
 * The service's own callers: API keys (hashed), the global access guard (authentication, scopes),
 * per-client rate limits, `GET /v1/me` and key management. Guards run in the order listed:
 * authenticate and authorise first, then count the request against the client's budget. Not global: the
 * modules that check keys themselves (status page, webhooks' revocation listener) import it. AuthConfig
 * comes from AppConfigModule.
 */
@Module({
  imports: [
    TypeOrmModule.forFeature([ApiClientEntity]),
    PaginationModule,
    // The live replica count that divides every client's budget.
    ReplicasModule,
    ThrottlerModule.forRootAsync({
      imports: [RateLimitStoreModule],
      inject: [AuthConfig, SlidingWindowThrottlerStorage],
      useFactory: (config: AuthConfig, storage: SlidingWindowThrottlerStorage) => ({
        throttlers: [
          {
            name: 'default',
            ttl: config.RATE_LIMIT_WINDOW_MS,
            limit: config.RATE_LIMIT_DEFAULT,
            blockDuration: 0,
          },
        ],
        // Exact sliding window like the stock store, O(1) per request instead of O(hits in window).
        storage,
      }),
    }),
  ],
  controllers: [AuthController, AdminApiClientsController],
  providers: [
    {
      provide: API_KEY_PEPPER,
      useFactory: (config: AuthConfig) => config.pepper,
      inject: [AuthConfig],
    },
    ApiClientRepository,
    ApiClientsService,
    ApiKeyAuthenticator,
    FailedAuthLimiter,
    AuthBootstrap,
    { provide: APP_GUARD, useClass: AccessGuard },
    { provide: APP_GUARD, useClass: ClientThrottlerGuard },
  ],
  exports: [ApiClientsService, FailedAuthLimiter],
})
export class AuthModule {}
