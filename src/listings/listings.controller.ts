import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RequireScope } from '../auth/access.decorators';
import { ParseU64Pipe } from '../common/int64.validators';
import { ApiErrorResponse } from '../common/openapi';
import { sendAnswer } from './conditional-get';
import { ListingDetailResponseDto, ListingsPageResponseDto } from './dto/listing.response.dto';
import { ListingQueryDto, ListingsQueryDto } from './dto/listings.query.dto';
import { EVENT_ID_PARAM, IF_NONE_MATCH } from './events.controller';
import { ListingsService } from './listings.service';

@ApiTags('catalog')
@Controller('v1/listings')
export class ListingsController {
  constructor(private readonly service: ListingsService) {}

  @Get()
  @RequireScope('catalog:read')
  @ApiOperation({
    operationId: 'listListings',
    summary: 'Active listings across events, by exact price (either way) or newest first',
    description:
      'The upstream cannot sort by price; the mirror can. Keyset-paginated (cursor bound to sort and filters).',
  })
  @ApiHeader(IF_NONE_MATCH)
  @ApiOkResponse({ type: ListingsPageResponseDto })
  async list(
    @Query() query: ListingsQueryDto,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    sendAnswer(reply, ifNoneMatch, await this.service.listings(query));
  }

  // Same parameter names as selling's `/v1/listings/:eventId/:ticketId/cancel`: Fastify's router shares the
  // path segments, and one segment cannot have two names.
  @Get(':eventId/:ticketId')
  @RequireScope('catalog:read')
  @ApiOperation({
    operationId: 'getListing',
    summary: 'One listing; with fresh=true re-read live from the upstream first',
    description:
      "fresh=true walks the event's active listings upstream (bounded by LISTINGS_FRESH_TIMEOUT_MS), updates " +
      'the mirror when the listing changed or disappeared, and answers from the updated row (checked_live_at set) ' +
      'or 410 when it is no longer active.',
  })
  @ApiParam({ ...EVENT_ID_PARAM, name: 'eventId', description: 'u64 decimal string' })
  @ApiParam({ name: 'ticketId', type: String, example: '7001', description: 'u64 decimal string' })
  @ApiHeader(IF_NONE_MATCH)
  @ApiOkResponse({ type: ListingDetailResponseDto })
  @ApiErrorResponse(404, 'NOT_FOUND: the listing was never in the mirror (nor live, with fresh=true)')
  @ApiErrorResponse(
    410,
    'GONE: the listing is no longer active (sold, cancelled or expired); details give last_seen_at and removed_at',
  )
  @ApiErrorResponse(502, 'UPSTREAM_UNAVAILABLE: fresh=true and the upstream failed')
  @ApiErrorResponse(504, 'UPSTREAM_TIMEOUT: fresh=true and the live re-read did not finish in time')
  async get(
    @Param('eventId', new ParseU64Pipe('eventId')) eventId: bigint,
    @Param('ticketId', new ParseU64Pipe('ticketId')) ticketId: bigint,
    @Query() query: ListingQueryDto,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    sendAnswer(reply, ifNoneMatch, await this.service.listing(eventId, ticketId, query.fresh === 'true'));
  }
}
