import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, Query } from '@nestjs/common';
import {
  ApiAcceptedResponse,
  ApiCreatedResponse,
  ApiNoContentResponse,
  ApiOkResponse,
  ApiOperation,
  ApiTags,
} from '@nestjs/swagger';
import { RequireScope } from '../auth/access.decorators';
import type { ClientContext } from '../auth/client-context';
import { CurrentClient } from '../auth/current-client.decorator';
import { PageQueryDto } from '../common/dto/page-query.dto';
import { ApiOkPage, type Page } from '../common/dto/page.dto';
import { ApiErrorResponse } from '../common/openapi';
import { ListDeliveriesQueryDto, WebhookDeliveryResponseDto } from './dto/webhook-delivery.dto';
import {
  CreatedWebhookEndpointResponseDto,
  CreateWebhookEndpointDto,
  PingResponseDto,
  RecoverResponseDto,
  RecoverWebhookEndpointDto,
  UpdateWebhookEndpointDto,
  WebhookEndpointResponseDto,
} from './dto/webhook-endpoint.dto';
import type { DeliveryView, EndpointView } from './webhook-endpoint.mapper';
import { WebhookEndpointsService } from './webhook-endpoints.service';

const NOT_FOUND = 'NOT_FOUND: no such endpoint for this client';
const MANUAL_LIMIT =
  "RATE_LIMITED: this client's budget for the route's scope is spent, or the endpoint's WEBHOOKS_MANUAL_SENDS_PER_MINUTE pings and manual retries this minute (Retry-After)";

/** Webhook endpoints (docs/webhooks.md): each client manages and sees only its own. */
@ApiTags('webhooks')
@Controller('v1/webhooks/endpoints')
@RequireScope('webhooks:write')
export class WebhookEndpointsController {
  constructor(private readonly endpoints: WebhookEndpointsService) {}

  @Post()
  @ApiOperation({
    operationId: 'createWebhookEndpoint',
    summary: 'Register an endpoint; its signing secret is in this answer only',
  })
  @ApiCreatedResponse({ type: CreatedWebhookEndpointResponseDto })
  @ApiErrorResponse(409, 'CONFLICT: the client has WEBHOOKS_MAX_ENDPOINTS_PER_CLIENT endpoints already')
  create(
    @CurrentClient() client: ClientContext,
    @Body() body: CreateWebhookEndpointDto,
  ): Promise<EndpointView & { secret: string }> {
    return this.endpoints.create(client, body);
  }

  @Get()
  @ApiOperation({ operationId: 'listWebhookEndpoints', summary: "The client's endpoints, newest first" })
  @ApiOkPage(WebhookEndpointResponseDto)
  list(@CurrentClient() client: ClientContext, @Query() query: PageQueryDto): Promise<Page<EndpointView>> {
    return this.endpoints.list(client, query.limit, query.cursor);
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getWebhookEndpoint',
    summary: 'One endpoint (never its secret); a disabled one says why',
  })
  @ApiOkResponse({ type: WebhookEndpointResponseDto })
  @ApiErrorResponse(404, NOT_FOUND)
  get(@CurrentClient() client: ClientContext, @Param('id') id: string): Promise<EndpointView> {
    return this.endpoints.get(client, id);
  }

  @Patch(':id')
  @ApiOperation({
    operationId: 'updateWebhookEndpoint',
    summary: 'Change url, description, event types or enabled (enabling clears the disabled reason)',
  })
  @ApiOkResponse({ type: WebhookEndpointResponseDto })
  @ApiErrorResponse(404, NOT_FOUND)
  update(
    @CurrentClient() client: ClientContext,
    @Param('id') id: string,
    @Body() body: UpdateWebhookEndpointDto,
  ): Promise<EndpointView> {
    return this.endpoints.update(client, id, body);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ operationId: 'deleteWebhookEndpoint', summary: 'Delete the endpoint and its delivery log' })
  @ApiNoContentResponse()
  @ApiErrorResponse(404, NOT_FOUND)
  async delete(@CurrentClient() client: ClientContext, @Param('id') id: string): Promise<void> {
    await this.endpoints.delete(client, id);
  }

  @Post(':id/rotate-secret')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'rotateWebhookEndpointSecret',
    summary:
      'A new signing secret (in this answer only); the old one keeps signing for WEBHOOKS_SECRET_GRACE_MS',
  })
  @ApiOkResponse({ type: CreatedWebhookEndpointResponseDto })
  @ApiErrorResponse(404, NOT_FOUND)
  rotateSecret(
    @CurrentClient() client: ClientContext,
    @Param('id') id: string,
  ): Promise<EndpointView & { secret: string }> {
    return this.endpoints.rotateSecret(client, id);
  }

  @Post(':id/ping')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'pingWebhookEndpoint',
    summary: 'Send a signed webhook.ping to this endpoint now (its outcome is in the delivery log)',
  })
  @ApiAcceptedResponse({ type: PingResponseDto })
  @ApiErrorResponse(404, NOT_FOUND)
  @ApiErrorResponse(409, 'CONFLICT: the endpoint is disabled')
  @ApiErrorResponse(429, MANUAL_LIMIT)
  ping(
    @CurrentClient() client: ClientContext,
    @Param('id') id: string,
  ): Promise<{ event_id: string; delivery_id: string }> {
    return this.endpoints.ping(client, id);
  }

  @Post(':id/recover')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'recoverWebhookEndpoint',
    summary:
      'Send again every failed (given-up) delivery created since `since` (the endpoint must be enabled first)',
  })
  @ApiAcceptedResponse({ type: RecoverResponseDto })
  @ApiErrorResponse(
    400,
    'VALIDATION_FAILED: since is not RFC 3339, is in the future or older than the outbox keeps',
  )
  @ApiErrorResponse(404, NOT_FOUND)
  @ApiErrorResponse(409, 'CONFLICT: the endpoint is disabled (PATCH enabled=true first)')
  @ApiErrorResponse(429, MANUAL_LIMIT)
  recover(
    @CurrentClient() client: ClientContext,
    @Param('id') id: string,
    @Body() body: RecoverWebhookEndpointDto,
  ): Promise<{ requeued: number }> {
    return this.endpoints.recover(client, id, body.since);
  }

  @Get(':id/deliveries')
  @ApiOperation({
    operationId: 'listWebhookDeliveries',
    summary: "The endpoint's deliveries, newest first: status, tries, last answer, next try",
  })
  @ApiOkPage(WebhookDeliveryResponseDto)
  @ApiErrorResponse(404, NOT_FOUND)
  deliveries(
    @CurrentClient() client: ClientContext,
    @Param('id') id: string,
    @Query() query: ListDeliveriesQueryDto,
  ): Promise<Page<DeliveryView>> {
    return this.endpoints.deliveries(client, id, query.limit, query.cursor, query.status);
  }

  @Post(':id/deliveries/:deliveryId/retry')
  @HttpCode(202)
  @ApiOperation({
    operationId: 'retryWebhookDelivery',
    summary: 'Send the delivery again now, same webhook-id (whatever its status)',
  })
  @ApiAcceptedResponse({ type: WebhookDeliveryResponseDto })
  @ApiErrorResponse(404, 'NOT_FOUND: no such endpoint or delivery for this client')
  @ApiErrorResponse(409, 'CONFLICT: the endpoint is disabled, or the delivery is being sent right now')
  @ApiErrorResponse(429, MANUAL_LIMIT)
  retry(
    @CurrentClient() client: ClientContext,
    @Param('id') id: string,
    @Param('deliveryId') deliveryId: string,
  ): Promise<DeliveryView> {
    return this.endpoints.retry(client, id, deliveryId);
  }
}
