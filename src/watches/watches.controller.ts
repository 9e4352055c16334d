import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query } from '@nestjs/common';
import {
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { RequireScope } from '../auth/access.decorators';
import type { ClientContext } from '../auth/client-context';
import { CurrentClient } from '../auth/current-client.decorator';
import { ApiOkPage, type Page } from '../common/dto/page.dto';
import { ApiErrorResponse } from '../common/openapi';
import { CreateWatchDto } from './dto/create-watch.dto';
import { ListWatchesQueryDto } from './dto/list-watches.query.dto';
import { WatchResponseDto } from './dto/watch.response.dto';
import type { WatchView } from './watch.mapper';
import { WatchesService } from './watches.service';

const NOT_FOUND = 'NOT_FOUND: no such watch for this client';

/** Price watches (docs/watches.md): each client manages and sees only its own; matches arrive as watch.matched. */
@ApiTags('watches')
@Controller('v1/watches')
export class WatchesController {
  constructor(private readonly watches: WatchesService) {}

  @Post()
  @RequireScope('watches:write', { wallet: 'user', in: 'body', field: 'subject' })
  @ApiOperation({
    operationId: 'createWatch',
    summary:
      'Watch an event for a listing at or under a price, or a price drop; matches arrive as watch.matched',
  })
  @ApiCreatedResponse({ type: WatchResponseDto })
  @ApiErrorResponse(
    400,
    'VALIDATION_FAILED: naming the field (event_id/q: exactly one, q matching no or several events; max_price_minor: ' +
      'a price condition is needed; expires_at: in the future, at most 366 days ahead)',
  )
  @ApiErrorResponse(409, 'CONFLICT: the client has WATCHES_MAX_PER_CLIENT unexpired watches already')
  create(@CurrentClient() client: ClientContext, @Body() body: CreateWatchDto): Promise<WatchView> {
    return this.watches.create(client, body);
  }

  @Get()
  @RequireScope('watches:write')
  @ApiOperation({
    operationId: 'listWatches',
    summary: "The client's watches, newest first (by subject or event)",
  })
  @ApiOkPage(WatchResponseDto)
  list(
    @CurrentClient() client: ClientContext,
    @Query() query: ListWatchesQueryDto,
  ): Promise<Page<WatchView>> {
    return this.watches.list(client, query);
  }

  @Get(':id')
  @RequireScope('watches:write')
  @ApiOperation({ operationId: 'getWatch', summary: 'One watch' })
  @ApiOkResponse({ type: WatchResponseDto })
  @ApiErrorResponse(404, NOT_FOUND)
  get(@CurrentClient() client: ClientContext, @Param('id') id: string): Promise<WatchView> {
    return this.watches.get(client, id);
  }

  @Delete(':id')
  @HttpCode(204)
  @RequireScope('watches:write')
  @ApiOperation({ operationId: 'deleteWatch', summary: 'Delete the watch: it matches nothing from now on' })
  @ApiNoContentResponse()
  @ApiErrorResponse(404, NOT_FOUND)
  async delete(@CurrentClient() client: ClientContext, @Param('id') id: string): Promise<void> {
    await this.watches.delete(client, id);
  }
}
