import { Body, Controller, Get, Headers, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RequireScope } from '../auth/access.decorators';
import type { ClientContext } from '../auth/client-context';
import { CurrentClient } from '../auth/current-client.decorator';
import { ApiOkPage } from '../common/dto/page.dto';
import { ApiErrorResponse } from '../common/openapi';
import { CheckoutService } from './checkout.service';
import { CreateOrderDto } from './dto/create-order.dto';
import { GetOrderQueryDto, ListOrdersQueryDto } from './dto/list-orders.query.dto';
import { OrderResponseDto } from './dto/order.response.dto';
import type { OrderResponse } from './order.mapper';

/** Checkout: buy a listing exactly once (docs/checkout.md). Orders are visible only to the creating client. */
@ApiTags('orders')
@Controller('v1/orders')
export class CheckoutController {
  constructor(private readonly checkout: CheckoutService) {}

  @Post()
  @RequireScope('orders:write', { wallet: 'user', in: 'body', field: 'buyer_subject' })
  @ApiOperation({
    operationId: 'createOrder',
    summary: 'Place an order for a listing at the price the buyer saw; 202 with the order',
  })
  @ApiHeader({
    name: 'Idempotency-Key',
    required: true,
    description: '1..255 visible ASCII characters; scoped to the calling client. Reuse it on every retry.',
  })
  @ApiResponse({
    status: 202,
    description: 'The order (`Idempotent-Replayed: true` when the key was used before)',
    type: OrderResponseDto,
  })
  @ApiErrorResponse(409, 'BUYER_EVENT_LIMIT: the buyer reached the orders-per-event limit of the window')
  @ApiErrorResponse(422, 'IDEMPOTENCY_KEY_REUSED: the key was used with a different body')
  @ApiErrorResponse(429, 'BUYER_OPEN_ORDERS_LIMIT: the buyer has too many open orders (Retry-After)')
  async create(
    @CurrentClient() client: ClientContext,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: CreateOrderDto,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { order, replayed } = await this.checkout.create(client.id, key ?? '', body, request.id);
    if (replayed) void reply.header('idempotent-replayed', 'true');
    await reply.header('location', `/v1/orders/${order.id}`).status(202).send(order);
  }

  @Get()
  @RequireScope('orders:write')
  @ApiOperation({
    operationId: 'listOrders',
    summary: "The client's orders, newest first (or the one made with ?idempotency_key=)",
  })
  @ApiOkPage(OrderResponseDto, '`{ items: [order…], next_cursor }`')
  list(
    @CurrentClient() client: ClientContext,
    @Query() query: ListOrdersQueryDto,
  ): Promise<{ items: OrderResponse[]; next_cursor: string | null }> {
    return this.checkout.list(client.id, query.limit, query.cursor, query.idempotency_key);
  }

  @Get(':id')
  @RequireScope('orders:write')
  @ApiOperation({
    operationId: 'getOrder',
    summary: 'One order; ?wait=5s holds the request until its state changes (bounded)',
  })
  @ApiResponse({
    status: 200,
    description: 'The order (state, meaning, money, failure, transaction)',
    type: OrderResponseDto,
  })
  @ApiErrorResponse(404, 'NOT_FOUND: no such order for this client')
  get(
    @CurrentClient() client: ClientContext,
    @Param('id') id: string,
    @Query() query: GetOrderQueryDto,
  ): Promise<OrderResponse> {
    return this.checkout.get(client.id, id, this.checkout.parseWait(query.wait), query.steps === 'true');
  }
}
