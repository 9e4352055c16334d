import { Injectable } from '@nestjs/common';
import { CatalogMirrorService } from '../catalog-sync/catalog-mirror.service';
import { CatalogSyncService } from '../catalog-sync/catalog-sync.service';
import { AppError } from '../common/app-error';
import { CheckoutConfig } from '../config/checkout.config';
import { DatabaseClock } from '../database/database-clock';
import { UpstreamClient } from '../upstream/upstream.client';
import { searchActiveListing } from '../upstream/listing-search';
import type { AcceptOfferV2Params, ActiveListing } from '../upstream/upstream.types';

export type Revalidation =
  | { kind: 'ok'; batch: Record<string, unknown>; decimals: number }
  | { kind: 'gone' }
  | { kind: 'price_changed'; currentPriceMinor: bigint }
  | { kind: 'restricted' };

export interface RevalidationInput {
  eventId: bigint;
  ticketId: bigint;
  expectedPriceMinor: bigint;
  buyerAddress: string;
  requestId?: string | null;
}

/**
 * Live revalidation for checkout: walks the upstream's active listings of the event (never the mirror),
 * bounded by CHECKOUT_REVALIDATE_TIMEOUT_MS, and builds the accept_offer_v2 batch from the live item
 * (seller_payout, permit_version, royalty_destinations, ticket_type_config, stablecoin_mint) plus the
 * integrator-level addresses (CHECKOUT_INTEGRATOR_* or the protocol config, from catalog sync's one cache) —
 * never from the caller.
 */
@Injectable()
export class CheckoutIntegrator {
  constructor(
    private readonly upstream: UpstreamClient,
    private readonly config: CheckoutConfig,
    private readonly sync: CatalogSyncService,
    private readonly mirror: CatalogMirrorService,
    private readonly clock: DatabaseClock,
  ) {}

  /**
   * `gone` only on a complete walk that proves the listing absent (listing-search.ts). Throws UpstreamError (or
   * AppError) when the upstream cannot answer in time, or when items with null identifiers could be the listing:
   * the outcome is then unknown, and the order's revalidate step retries it (bounded by its give-up).
   *
   * Every observation counts: a listing found gone or at another price is applied to its mirror row before the
   * answer (CatalogMirrorService.applyObservation: guarded by `observed_at`, stamped on the database clock before
   * the walk; a failed or slow write is logged and counted, and holds the step OBSERVATION_WRITE_TIMEOUT_MS at most).
   */
  async revalidate(input: RevalidationInput): Promise<Revalidation> {
    const signal = AbortSignal.timeout(this.config.CHECKOUT_REVALIDATE_TIMEOUT_MS);
    const requestId = input.requestId ?? undefined;
    const observedAt = this.clock.now();
    const search = await searchActiveListing(this.upstream, { ...input, signal, requestId });
    const observe = (live: ActiveListing | null) =>
      this.mirror.applyObservation(
        { eventId: input.eventId, ticketId: input.ticketId, live, observedAt },
        'checkout',
      );
    if (search.kind === 'absent') {
      await observe(null);
      return { kind: 'gone' };
    }
    // Items with null identifiers could be this listing: not proof either way, so the attempt retries.
    if (search.kind === 'undecided') throw undecided(search.maybe);
    const found = search.listing;
    if (found.askPriceMinor !== input.expectedPriceMinor) {
      await observe(found);
      return { kind: 'price_changed', currentPriceMinor: found.askPriceMinor };
    }
    const allow = found.raw.buyer_allow;
    if (typeof allow === 'string' && allow !== input.buyerAddress) return { kind: 'restricted' };
    const protocol = await this.protocolConfig(signal, requestId);
    const params: AcceptOfferV2Params = {
      event_id: input.eventId,
      ticket_id: input.ticketId,
      permit_version: u64Field(found.raw, 'permit_version'),
      buyer: input.buyerAddress,
      integrator_authority: this.address(
        this.config.CHECKOUT_INTEGRATOR_AUTHORITY,
        protocol.raw,
        'integrator_authority',
      ),
      seller_payout: textField(found.raw, 'seller_payout'),
      royalty_destinations: addressList(found.raw.royalty_destinations),
      ticket_type_config:
        typeof found.raw.ticket_type_config === 'string' ? found.raw.ticket_type_config : null,
      integrator_identity: this.address(
        this.config.CHECKOUT_INTEGRATOR_IDENTITY,
        protocol.raw,
        'integrator_identity',
      ),
      stablecoin_mint: textField(found.raw, 'stablecoin_mint'),
    };
    return { kind: 'ok', batch: wireBatch(params), decimals: protocol.decimals };
  }

  /** `stablecoin_decimals` of the protocol config (the one cache), or null when it cannot be had now. */
  async decimals(): Promise<number | null> {
    try {
      return (await this.protocolConfig()).decimals;
    } catch {
      return null;
    }
  }

  private address(configured: string | undefined, raw: Record<string, unknown>, field: string): string {
    const value = configured ?? raw[field];
    if (typeof value !== 'string' || value.length === 0)
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        `Checkout is not configured: set CHECKOUT_INTEGRATOR_* or serve ${field} in the protocol config`,
      );
    return value;
  }

  /** The protocol config from catalog sync's one cache (a live fetch through it when it has none; errors thrown). */
  private async protocolConfig(
    signal?: AbortSignal,
    requestId?: string,
  ): Promise<{ raw: Record<string, unknown>; decimals: number }> {
    const config = await this.sync.requireProtocolConfig({ signal, requestId });
    return { raw: config.raw, decimals: config.stablecoinDecimals };
  }
}

function undecided(maybe: number): AppError {
  return new AppError(
    'UPSTREAM_UNAVAILABLE',
    `The listing could not be found or ruled out: ${maybe} item(s) of its event came back with a null identifier`,
  );
}

function textField(raw: Record<string, unknown>, name: string): string {
  const value = raw[name];
  if (typeof value !== 'string' || value.length === 0)
    throw new AppError('UPSTREAM_UNAVAILABLE', `The live listing has no ${name}`);
  return value;
}

function u64Field(raw: Record<string, unknown>, name: string): bigint {
  const value = raw[name];
  if (
    (typeof value === 'string' && /^[0-9]{1,20}$/.test(value)) ||
    (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0)
  )
    return BigInt(value);
  throw new AppError('UPSTREAM_UNAVAILABLE', `The live listing has no usable ${name}`);
}

function addressList(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The batch as stored on the order and sent to signing: u64 values as decimal strings. */
export function wireBatch(params: AcceptOfferV2Params): Record<string, unknown> {
  const wire: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(params))
    wire[key] = typeof value === 'bigint' ? value.toString() : value;
  return { instruction: 'accept_offer_v2', params: [wire] };
}

/** The stored batch back as an InstructionBatch for TransactionsService.sign. */
export function batchFromWire(stored: Record<string, unknown>): {
  instruction: 'accept_offer_v2';
  params: [AcceptOfferV2Params];
} {
  const [p] = stored.params as Record<string, unknown>[];
  if (!p) throw new Error('stored batch has no params');
  return {
    instruction: 'accept_offer_v2',
    params: [
      {
        event_id: BigInt(p.event_id as string),
        ticket_id: BigInt(p.ticket_id as string),
        permit_version: BigInt(p.permit_version as string),
        buyer: p.buyer as string,
        integrator_authority: p.integrator_authority as string,
        seller_payout: p.seller_payout as string,
        royalty_destinations: p.royalty_destinations as string[],
        ticket_type_config: (p.ticket_type_config as string | null | undefined) ?? null,
        integrator_identity: p.integrator_identity as string,
        stablecoin_mint: p.stablecoin_mint as string,
      },
    ],
  };
}
