import { Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { ApiClientsService } from '../auth/api-clients.service';
import { WebhookEndpointRepository } from './webhook-endpoint.repository';

/** Why the endpoints of a revoked key stop: shown in their GET. */
export const REVOKED_REASON = 'disabled: the API key that owns it was revoked';

/**
 * The one place a key revocation reaches webhooks: registered on ApiClientsService at module init, so every revoke
 * through that service (the admin API in the app, and the `keys` CLI, which composes this same provider in its own
 * small Nest context, see keys-cli.module.ts) disables the revoked keys' endpoints. Nothing more reaches them.
 */
@Injectable()
export class RevokedKeyEndpoints implements OnModuleInit {
  private readonly logger = new Logger('Webhooks');

  constructor(
    private readonly endpoints: WebhookEndpointRepository,
    private readonly apiClients: ApiClientsService,
  ) {}

  onModuleInit(): void {
    this.apiClients.onRevoked((ids) => this.disable(ids));
  }

  /** Disables the endpoints of revoked clients (the keys `ids`). */
  async disable(ids: string[]): Promise<void> {
    const disabled = await this.endpoints.disableClients(ids, REVOKED_REASON);
    for (const endpoint of disabled)
      this.logger.warn(
        { endpointId: endpoint.id, clientId: endpoint.client_id },
        'webhook endpoint disabled: its key was revoked',
      );
  }
}
