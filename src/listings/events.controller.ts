import { Controller, Get, Headers, Param, Query, Res } from '@nestjs/common';
import { ApiHeader, ApiOkResponse, ApiOperation, ApiParam, ApiTags } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { RequireScope } from '../auth/access.decorators';
import { ParseU64Pipe } from '../common/int64.validators';
import { ApiErrorResponse } from '../common/openapi';
import { sendAnswer } from './conditional-get';
import { EventDetailResponseDto, EventsPageResponseDto } from './dto/event.response.dto';
import { EventsQueryDto } from './dto/events.query.dto';
import { ListingsPageResponseDto } from './dto/listing.response.dto';
import { ListingsQueryDto } from './dto/listings.query.dto';
import { ListingsService } from './listings.service';

export const EVENT_ID_PARAM = {
  name: 'event_id',
  type: String,
  example: '42',
  description: 'u64 decimal string; anything else is a 400 naming event_id',
} as const;

/** Documents the conditional GET every read route supports. */
export const IF_NONE_MATCH = {
  name: 'if-none-match',
  required: false,
  description:
    'An ETag from an earlier answer: the answer is 304 Not Modified (no body, same ETag) while it is unchanged',
} as const;

@ApiTags('catalog')
@Controller('v1/events')
export class EventsController {
  constructor(private readonly service: ListingsService) {}

  @Get()
  @RequireScope('catalog:read')
  @ApiOperation({
    operationId: 'listEvents',
    summary: 'Upcoming events from the mirror, by start time then id (unparsed start times last)',
    description:
      'Keyset-paginated: pass next_cursor back as cursor with the same q/starts_after/starts_before.',
  })
  @ApiHeader(IF_NONE_MATCH)
  @ApiOkResponse({ type: EventsPageResponseDto, headers: { ETag: {}, 'Cache-Control': {} } })
  async list(
    @Query() query: EventsQueryDto,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    sendAnswer(reply, ifNoneMatch, await this.service.events(query));
  }

  @Get(':event_id')
  @RequireScope('catalog:read')
  @ApiOperation({
    operationId: 'getEvent',
    summary: 'One event with its active listing count and lowest and highest ask',
  })
  @ApiParam(EVENT_ID_PARAM)
  @ApiHeader(IF_NONE_MATCH)
  @ApiOkResponse({ type: EventDetailResponseDto })
  @ApiErrorResponse(400, 'VALIDATION_FAILED: event_id is not a u64 decimal string')
  @ApiErrorResponse(404, 'NOT_FOUND: no such event in the mirror')
  @ApiErrorResponse(410, 'GONE: the event is no longer listed upstream; details say when it was last seen')
  async get(
    @Param('event_id', new ParseU64Pipe('event_id')) eventId: bigint,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    sendAnswer(reply, ifNoneMatch, await this.service.event(eventId));
  }

  @Get(':event_id/listings')
  @RequireScope('catalog:read')
  @ApiOperation({
    operationId: 'listEventListings',
    summary: 'Active listings of one event, by exact price (either way) or newest first',
    description: 'Keyset-paginated; the cursor is bound to the event, sort and price filters.',
  })
  @ApiParam(EVENT_ID_PARAM)
  @ApiHeader(IF_NONE_MATCH)
  @ApiOkResponse({ type: ListingsPageResponseDto })
  @ApiErrorResponse(404, 'NOT_FOUND: no such event in the mirror')
  @ApiErrorResponse(410, 'GONE: the event is no longer listed upstream')
  async listings(
    @Param('event_id', new ParseU64Pipe('event_id')) eventId: bigint,
    @Query() query: ListingsQueryDto,
    @Headers('if-none-match') ifNoneMatch: string | undefined,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    sendAnswer(reply, ifNoneMatch, await this.service.listings(query, eventId));
  }
}
