import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { CheckoutConfig } from '../config/checkout.config';
import { UpstreamClient } from '../upstream/upstream.client';
import { searchActiveListing } from '../upstream/listing-search';
import type { AcceptOfferV2Params } from '../upstream/upstream.types';

const CACHE_MS = 5 * 60_000;

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
 * integrator-level addresses (CHECKOUT_INTEGRATOR_* or the protocol config) — never from the caller.
 */
@Injectable()
export class CheckoutIntegrator {
  private protocol: { at: number; raw: Record<string, unknown>; decimals: number } | null = null;

  constructor(
    private readonly upstream: UpstreamClient,
    private readonly config: CheckoutConfig,
  ) {}

  /**
   * `gone` only on a complete walk that proves the listing absent (listing-search.ts). Throws UpstreamError (or
   * AppError) when the upstream cannot answer in time, or when items with null identifiers could be the listing:
   * the outcome is then unknown, and the order's revalidate step retries it (bounded by its give-up).
   */
  async revalidate(input: RevalidationInput): Promise<Revalidation> {
    const signal = AbortSignal.timeout(this.config.CHECKOUT_REVALIDATE_TIMEOUT_MS);
    const requestId = input.requestId ?? undefined;
    const search = await searchActiveListing(this.upstream, { ...input, signal, requestId });
    if (search.kind === 'absent') return { kind: 'gone' };
    // Items with null identifiers could be this listing: not proof either way, so the attempt retries.
    if (search.kind === 'undecided') throw undecided(search.maybe);
    const found = search.listing;
    if (found.askPriceMinor !== input.expectedPriceMinor)
      return { kind: 'price_changed', currentPriceMinor: found.askPriceMinor };
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

  /** `stablecoin_decimals` of the protocol config (cached), or null when the upstream cannot say now. */
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

  private async protocolConfig(
    signal?: AbortSignal,
    requestId?: string,
  ): Promise<{ raw: Record<string, unknown>; decimals: number }> {
    if (this.protocol && Date.now() - this.protocol.at < CACHE_MS) return this.protocol;
    const config = await this.upstream.getProtocolConfig({ signal, requestId });
    this.protocol = { at: Date.now(), raw: config.raw, decimals: config.stablecoinDecimals };
    return this.protocol;
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
