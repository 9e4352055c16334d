import { Injectable } from '@nestjs/common';
import { CatalogSyncService } from '../catalog-sync/catalog-sync.service';
import { AppError } from '../common/app-error';
import { TransactionsConfig } from '../config/transactions.config';
import { UpstreamClient } from '../upstream/upstream.client';

export interface IntegratorAddresses {
  identity: string;
  authority: string;
  storageFeePayer: string;
  stablecoinMint: string;
}

/** Reuse of the events walk that found an event's ticket_type_config. */
export const TICKET_TYPE_CACHE_MS = 5 * 60_000;

/**
 * Integrator-level addresses for list_ticket_v2: SELLING_* configuration first, else the upstream protocol
 * config (`integrator_identity`, `integrator_authority`, `fee_payer`, `stablecoin_mint`, from catalog sync's one
 * protocol-config cache; the sandbox serves all four, so zero configuration works against it). Never from the caller. Also the event's
 * `ticket_type_config`, which list_ticket_v2 must repeat, read from the upstream's upcoming events.
 */
@Injectable()
export class SellingIntegrator {
  private readonly ticketTypes = new Map<string, { at: number; value: string | null }>();

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly config: TransactionsConfig,
    private readonly sync: CatalogSyncService,
  ) {}

  async addresses(): Promise<IntegratorAddresses> {
    const c = this.config;
    const configured = {
      identity: c.SELLING_INTEGRATOR_IDENTITY,
      authority: c.SELLING_INTEGRATOR_AUTHORITY,
      storageFeePayer: c.SELLING_STORAGE_FEE_PAYER,
      stablecoinMint: c.SELLING_STABLECOIN_MINT,
    };
    if (Object.values(configured).every((v) => v !== undefined)) return configured as IntegratorAddresses;
    // The one cache (a live fetch through it when it has none; an UpstreamError is mapped by the caller).
    const { raw } = await this.sync.requireProtocolConfig();
    const pick = (value: string | undefined, field: string): string => {
      const found = value ?? raw[field];
      if (typeof found !== 'string' || found.length === 0)
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          `Selling is not configured: set SELLING_* or serve ${field} in the protocol config`,
        );
      return found;
    };
    return {
      identity: pick(configured.identity, 'integrator_identity'),
      authority: pick(configured.authority, 'integrator_authority'),
      storageFeePayer: pick(configured.storageFeePayer, 'fee_payer'),
      stablecoinMint: pick(configured.stablecoinMint, 'stablecoin_mint'),
    };
  }

  /** The event's ticket_type_config (null when it has none); undefined when the event is not upcoming. */
  async ticketTypeConfig(eventId: bigint): Promise<string | null | undefined> {
    const cached = this.ticketTypes.get(eventId.toString());
    if (cached && Date.now() - cached.at < TICKET_TYPE_CACHE_MS) return cached.value;
    for await (const page of this.upstream.walkUpcomingEvents({ limit: 1000, maxPages: 1000 })) {
      for (const event of page.items) {
        if (event.eventId === null) continue;
        const value = event.raw.ticket_type_config;
        this.ticketTypes.set(event.eventId.toString(), {
          at: Date.now(),
          value: typeof value === 'string' ? value : null,
        });
      }
    }
    return this.ticketTypes.get(eventId.toString())?.value;
  }
}
