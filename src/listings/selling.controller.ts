import { Body, Controller, Headers, Param, Post, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RequireScope } from '../auth/access.decorators';
import type { ClientContext } from '../auth/client-context';
import { CurrentClient } from '../auth/current-client.decorator';
import { ParseU64Pipe } from '../common/int64.validators';
import { ApiErrorResponse } from '../common/openapi';
import { toTransactionResponse } from '../transactions/transaction.mapper';
import { TransactionResponseDto } from '../transactions/dto/transaction.response.dto';
import { CancelListingDto, CreateListingDto } from './dto/create-listing.dto';
import { SellingService, type SellingOutcome } from './selling.service';

const IDEMPOTENCY = ApiHeader({
  name: 'Idempotency-Key',
  required: true,
  description: '1..255 visible ASCII characters; scoped to the calling client. Reuse it on every retry.',
});

const RECORD = {
  status: 202,
  description: 'The transaction record (status null/processing is NOT success)',
  type: TransactionResponseDto,
};

/** Both routes act for the seller's custodial user wallet: a bound key must be bound to that subject. */
const SELLER = { wallet: 'user', in: 'body', field: 'seller_subject' } as const;

async function answer(reply: FastifyReply, { record, replayed }: SellingOutcome): Promise<void> {
  if (replayed) void reply.header('idempotent-replayed', 'true');
  await reply.status(202).send(toTransactionResponse(record));
}

/** Selling (write half of listings/): list and cancel through the seller's custodial user wallet. */
@ApiTags('listings')
@Controller('v1/listings')
export class SellingController {
  constructor(private readonly selling: SellingService) {}

  @Post()
  @RequireScope('listings:write', SELLER)
  @ApiOperation({
    operationId: 'createListing',
    summary: 'List a ticket (list_ticket_v2): sign, submit, track; 202 with the transaction record',
  })
  @IDEMPOTENCY
  @ApiResponse(RECORD)
  @ApiErrorResponse(409, 'CONFLICT: a request with this key is in flight (Retry-After)')
  @ApiErrorResponse(422, 'IDEMPOTENCY_KEY_REUSED or UPSTREAM_REJECTED')
  @ApiErrorResponse(502, 'UPSTREAM_UNAVAILABLE: outcome unknown, retry with the same key')
  @ApiErrorResponse(503, 'SERVICE_UNAVAILABLE: integrator addresses unknown')
  @ApiErrorResponse(504, 'UPSTREAM_TIMEOUT: outcome unknown, retry with the same key')
  async list(
    @CurrentClient() client: ClientContext,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: CreateListingDto,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await answer(reply, await this.selling.list(client.id, key ?? '', body, request.id));
  }

  @Post(':eventId/:ticketId/cancel')
  @RequireScope('listings:write', SELLER)
  @ApiOperation({
    operationId: 'cancelListing',
    summary: 'Cancel a listing (cancel_listing_v1) through the seller wallet; 202 with the record',
  })
  @IDEMPOTENCY
  @ApiResponse(RECORD)
  @ApiErrorResponse(404, 'NOT_FOUND: never (a malformed id is a 400 naming it)')
  @ApiErrorResponse(409, 'CONFLICT: a request with this key is in flight (Retry-After)')
  @ApiErrorResponse(422, 'IDEMPOTENCY_KEY_REUSED or UPSTREAM_REJECTED')
  @ApiErrorResponse(502, 'UPSTREAM_UNAVAILABLE: outcome unknown, retry with the same key')
  @ApiErrorResponse(504, 'UPSTREAM_TIMEOUT: outcome unknown, retry with the same key')
  async cancel(
    @CurrentClient() client: ClientContext,
    @Headers('idempotency-key') key: string | undefined,
    // Parsed here, not as param pipes: the global ValidationPipe refuses a `bigint` metatype.
    @Param('eventId') eventIdText: string,
    @Param('ticketId') ticketIdText: string,
    @Body() body: CancelListingDto,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const eventId = new ParseU64Pipe('event_id').transform(eventIdText);
    const ticketId = new ParseU64Pipe('ticket_id').transform(ticketIdText);
    await answer(reply, await this.selling.cancel(client.id, key ?? '', eventId, ticketId, body, request.id));
  }
}
