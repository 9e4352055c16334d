import { Module, type DynamicModule } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { RevokedKeyEndpoints } from '../webhooks/revoked-key-endpoints';
import { WebhookEndpointRepository } from '../webhooks/webhook-endpoint.repository';
import { ApiClientRepository } from './api-client.repository';
import { API_KEY_PEPPER, ApiClientsService } from './api-clients.service';

/**
 * The `keys` CLI's Nest context over the command's own DataSource: the same ApiClientsService as AuthModule (same
 * repository and pepper) and the same revocation listener as the app (RevokedKeyEndpoints), so a revoke from the CLI
 * disables the revoked keys' webhook endpoints exactly as the admin API does. No workers, no HTTP.
 */
@Module({})
export class KeysCliModule {
  static over(dataSource: DataSource, pepper: string): DynamicModule {
    return {
      module: KeysCliModule,
      providers: [
        { provide: DataSource, useValue: dataSource },
        { provide: API_KEY_PEPPER, useValue: pepper },
        ApiClientRepository,
        ApiClientsService,
        WebhookEndpointRepository,
        RevokedKeyEndpoints,
      ],
    };
  }
}
