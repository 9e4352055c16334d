import { Injectable } from '@nestjs/common';
import { AppError } from '../common/app-error';
import { validationFailed } from '../common/validation';
import { TransactionsConfig } from '../config/transactions.config';
import { TransactionsService, type TransactionRecord } from '../transactions/transactions.service';
import { UpstreamError } from '../upstream/upstream.error';
import type { ListTicketV2Params } from '../upstream/upstream.types';
import type { CancelListingDto, CreateListingDto } from './dto/create-listing.dto';
import { REFRESH_EVENT_ON_FINAL } from './mirror-refresh.handler';
import { SellingIntegrator } from './selling.integrator';

export interface SellingOutcome {
  record: TransactionRecord;
  replayed: boolean;
}

/**
 * Selling: list_ticket_v2 and cancel_listing_v1 signed through the seller's user wallet, submitted and
 * tracked by TransactionsService; a confirmed one refreshes its event in the mirror (after-final handler
 * `listings.refresh-event`, MirrorRefreshHandler).
 */
@Injectable()
export class SellingService {
  constructor(
    private readonly transactions: TransactionsService,
    private readonly integrator: SellingIntegrator,
    private readonly config: TransactionsConfig,
  ) {}

  async list(
    clientId: string,
    key: string,
    dto: CreateListingDto,
    requestId?: string,
  ): Promise<SellingOutcome> {
    const expiresAt = BigInt(dto.expires_at);
    const now = BigInt(Math.floor(Date.now() / 1000));
    if (expiresAt <= now || expiresAt > now + BigInt(this.config.SELLING_MAX_EXPIRY_SECONDS)) {
      throw validationFailed([
        {
          field: 'expires_at',
          problems: [
            `expires_at is unix time in seconds and must be in the future, at most ${this.config.SELLING_MAX_EXPIRY_SECONDS} s ahead`,
          ],
        },
      ]);
    }
    const eventId = BigInt(dto.event_id);
    const [addresses, ticketTypeConfig] = await upstreamCall(() =>
      Promise.all([
        this.integrator.addresses(),
        dto.ticket_type_config === undefined
          ? this.integrator.ticketTypeConfig(eventId)
          : Promise.resolve(dto.ticket_type_config),
      ]),
    );
    const params: ListTicketV2Params = {
      seller: dto.seller_address,
      storage_fee_payer: addresses.storageFeePayer,
      listing_integrator_identity: addresses.identity,
      listing_integrator_authority: addresses.authority,
      stablecoin_mint: addresses.stablecoinMint,
      event_id: eventId,
      ticket_id: BigInt(dto.ticket_id),
      ask_price_minor: BigInt(dto.ask_price_minor),
      ...(dto.buyer_allow === undefined ? {} : { buyer_allow: dto.buyer_allow }),
      payout_ata: dto.payout_ata,
      expires_at: expiresAt,
      ...(ticketTypeConfig === undefined ? {} : { ticket_type_config: ticketTypeConfig }),
    };
    return this.signAndSubmit(
      clientId,
      key,
      dto.seller_subject,
      { instruction: 'list_ticket_v2', params: [params] },
      requestId,
    );
  }

  cancel(
    clientId: string,
    key: string,
    eventId: bigint,
    ticketId: bigint,
    dto: CancelListingDto,
    requestId?: string,
  ): Promise<SellingOutcome> {
    return this.signAndSubmit(
      clientId,
      key,
      dto.seller_subject,
      {
        instruction: 'cancel_listing_v1',
        params: [{ event_id: eventId, ticket_id: ticketId, canceller: dto.seller_address }],
      },
      requestId,
    );
  }

  private async signAndSubmit(
    clientId: string,
    key: string,
    subject: string,
    batch: Parameters<TransactionsService['sign']>[0]['batch'],
    requestId?: string,
  ): Promise<SellingOutcome> {
    const { record, replayed } = await this.transactions.sign({
      clientId,
      idempotencyKey: key,
      kind: 'user',
      subject,
      batch,
      requestId,
      onFinal: REFRESH_EVENT_ON_FINAL,
      submitOnSign: true,
    });
    // A replay of a request already submitted: report, do not re-send (the tracker owns it now).
    if (replayed && record.submittedAt) return { record, replayed };
    const submitted = await this.transactions.submit(
      record.custodialTransactionId ?? '',
      clientId,
      requestId,
    );
    return { record: submitted.record, replayed };
  }
}

async function upstreamCall<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof UpstreamError)) throw error;
    throw new AppError(
      error.code === 'TIMEOUT' ? 'UPSTREAM_TIMEOUT' : 'UPSTREAM_UNAVAILABLE',
      `The upstream could not be read (${error.code})`,
      undefined,
      error.retryAfterSeconds,
    );
  }
}
