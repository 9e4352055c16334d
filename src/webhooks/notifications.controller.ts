import { Controller, Get, Query } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { Authenticated } from '../auth/access.decorators';
import type { ClientContext } from '../auth/client-context';
import { CurrentClient } from '../auth/current-client.decorator';
import { ApiErrorResponse } from '../common/openapi';
import { FeedPageDto, NotificationsQueryDto } from './dto/notifications.dto';
import { NotificationsService, type FeedPage } from './notifications.service';

/**
 * The catch-up feed (docs/webhooks.md): the same events the webhooks carry, in commit order, by cursor. Any key
 * reads its own client's feed (no scope: a client's own events are no more than its records show); an admin key
 * also reads the operator events.
 */
@ApiTags('webhooks')
@Controller('v1/notifications')
export class NotificationsController {
  constructor(private readonly notifications: NotificationsService) {}

  @Get()
  @Authenticated()
  @ApiOperation({
    operationId: 'listNotifications',
    summary: "The client's events after a cursor, oldest first (gap-free: resume with next_cursor)",
  })
  @ApiOkResponse({ type: FeedPageDto })
  @ApiErrorResponse(
    410,
    'GONE: the cursor is older than the retention; `details.oldest_cursor` resumes from the oldest event kept',
  )
  feed(@CurrentClient() client: ClientContext, @Query() query: NotificationsQueryDto): Promise<FeedPage> {
    return this.notifications.feed(client, query.after, query.limit);
  }
}
