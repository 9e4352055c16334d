import { Body, Controller, Get, Headers, Param, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiHeader, ApiOperation, ApiResponse, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { RequireScope } from '../auth/access.decorators';
import type { ClientContext } from '../auth/client-context';
import { CurrentClient } from '../auth/current-client.decorator';
import { ApiErrorResponse } from '../common/openapi';
import { SubmitTransactionDto } from './dto/submit-transaction.dto';
import { SubmissionResultDto, TransactionResponseDto } from './dto/transaction.response.dto';
import type { WalletKind } from './ledger-transaction.entity';
import { toSubmissionResult, toTransactionResponse } from './transaction.mapper';
import { TransactionsService } from './transactions.service';

const INSTRUCTION_BATCH_SCHEMA = {
  type: 'object',
  required: ['platformInstructions'],
  properties: {
    platformInstructions: {
      type: 'object',
      required: ['instruction', 'params'],
      properties: {
        instruction: { type: 'string', enum: ['accept_offer_v2', 'cancel_listing_v1', 'list_ticket_v2'] },
        params: { type: 'array', minItems: 1, items: { type: 'object' } },
      },
    },
  },
  example: {
    platformInstructions: {
      instruction: 'list_ticket_v2',
      params: [{ event_id: '100000', ticket_id: '1', ask_price_minor: '25000000' }],
    },
  },
};

export const IDEMPOTENCY_HEADER = ApiHeader({
  name: 'Idempotency-Key',
  required: true,
  description: '1..255 visible ASCII characters; scoped to the calling client. Reuse it on every retry.',
});

function SignRoute(kind: WalletKind): MethodDecorator {
  return (target, key, descriptor) => {
    for (const decorate of [
      // The path's subject is the wallet that signs: a bound key must be bound to it.
      RequireScope('transactions:write', { wallet: kind, in: 'path', field: 'subject' }),
      ApiOperation({
        operationId: kind === 'user' ? 'signUserTransaction' : 'signIntegratorTransaction',
        summary: `Sign a ${kind} transaction through the upstream custody (idempotent per Idempotency-Key)`,
      }),
      IDEMPOTENCY_HEADER,
      ApiBody({ schema: INSTRUCTION_BATCH_SCHEMA }),
      ApiResponse({
        status: 201,
        description: 'Signed (not submitted): the transaction record',
        type: TransactionResponseDto,
      }),
      ApiResponse({
        status: 200,
        description: 'Replay (`Idempotent-Replayed: true`): the stored record',
        type: TransactionResponseDto,
      }),
      ApiErrorResponse(404, 'NOT_FOUND: never for a subject (any non-empty subject is passed upstream)'),
      ApiErrorResponse(409, 'CONFLICT: the first request with this key is still in flight (Retry-After)'),
      ApiErrorResponse(422, 'IDEMPOTENCY_KEY_REUSED (other body) or UPSTREAM_REJECTED (upstream 4xx)'),
      ApiErrorResponse(502, 'UPSTREAM_UNAVAILABLE: outcome unknown, retry with the same key'),
      ApiErrorResponse(504, 'UPSTREAM_TIMEOUT: outcome unknown, retry with the same key'),
    ])
      decorate(target, key, descriptor);
  };
}

/** HTTP over TransactionsService: sign, submit, read. See docs/transactions.md. */
@ApiTags('transactions')
@Controller('v1')
export class TransactionsController {
  constructor(private readonly transactions: TransactionsService) {}

  @Post('wallets/users/:subject/signatures')
  @SignRoute('user')
  signUser(
    @CurrentClient() client: ClientContext,
    @Param('subject') subject: string,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.sign('user', client, subject, key, body, request, reply);
  }

  @Post('wallets/integrators/:subject/signatures')
  @SignRoute('integrator')
  signIntegrator(
    @CurrentClient() client: ClientContext,
    @Param('subject') subject: string,
    @Headers('idempotency-key') key: string | undefined,
    @Body() body: unknown,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    return this.sign('integrator', client, subject, key, body, request, reply);
  }

  @Post('transactions/submissions')
  @RequireScope('transactions:write')
  @ApiOperation({
    operationId: 'submitSignedTransaction',
    summary:
      'Submit a transaction signed through this service (contract shape); status null/processing is not success',
  })
  @ApiResponse({
    status: 200,
    description: 'The upstream answered: its status, unchanged',
    type: SubmissionResultDto,
  })
  @ApiResponse({
    status: 202,
    description: 'Outcome unknown (timeout/5xx): tracked in the background',
    type: SubmissionResultDto,
  })
  @ApiErrorResponse(404, 'NOT_FOUND: no transaction signed through this service for this client matches')
  @ApiErrorResponse(422, 'UPSTREAM_REJECTED: the upstream refused the submission (4xx)')
  async submitSigned(
    @CurrentClient() client: ClientContext,
    @Body() body: SubmitTransactionDto,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { record, answered } = await this.transactions.submitSigned(
      client.id,
      body.signedTransaction,
      (body.additionalSignatures ?? []).map((s) => ({ address: s.address, signature: s.signature })),
      request.id,
    );
    await reply.status(answered ? 200 : 202).send(toSubmissionResult(record));
  }

  @Post('transactions/:custodialTransactionId/submit')
  @RequireScope('transactions:write')
  @ApiOperation({
    operationId: 'submitTransaction',
    summary: 'Submit (or re-submit) the same signed bytes; tracked in the background until final',
  })
  @ApiResponse({
    status: 200,
    description: 'The upstream answered: the record with its status, unchanged',
    type: TransactionResponseDto,
  })
  @ApiResponse({
    status: 202,
    description: 'Outcome unknown (timeout/5xx): tracked in the background',
    type: TransactionResponseDto,
  })
  @ApiErrorResponse(404, "NOT_FOUND: unknown id or another client's transaction")
  @ApiErrorResponse(409, 'CONFLICT: not signed yet')
  @ApiErrorResponse(422, 'UPSTREAM_REJECTED: the upstream refused the submission (4xx)')
  async submit(
    @CurrentClient() client: ClientContext,
    @Param('custodialTransactionId') id: string,
    @Req() request: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const { record, answered } = await this.transactions.submit(id, client.id, request.id);
    await reply.status(answered ? 200 : 202).send(toTransactionResponse(record));
  }

  @Get('transactions/:custodialTransactionId')
  @RequireScope('transactions:write')
  @ApiOperation({
    operationId: 'getTransaction',
    summary: 'A transaction record, its current status and its history (creator only)',
  })
  @ApiResponse({ status: 200, description: 'The record with `history`', type: TransactionResponseDto })
  @ApiErrorResponse(404, "NOT_FOUND: unknown id or another client's transaction")
  async get(
    @CurrentClient() client: ClientContext,
    @Param('custodialTransactionId') id: string,
  ): Promise<ReturnType<typeof toTransactionResponse>> {
    const { record, history } = await this.transactions.get(id, client.id);
    return toTransactionResponse(record, history);
  }

  private async sign(
    kind: WalletKind,
    client: ClientContext,
    subject: string,
    key: string | undefined,
    body: unknown,
    request: FastifyRequest,
    reply: FastifyReply,
  ): Promise<void> {
    const batch = this.transactions.parseBatch(body);
    const { record, replayed } = await this.transactions.sign({
      clientId: client.id,
      idempotencyKey: key ?? '',
      kind,
      subject,
      batch,
      requestId: request.id,
      // What a confirmed transaction of this instruction must set off, whichever route signed it (a list, cancel
      // or buy: the mirror refresh of its events, registered by listings/). Run by the tracker, never awaited here.
      onFinal: this.transactions.finalHandlerFor(batch.instruction),
    });
    if (replayed) void reply.header('idempotent-replayed', 'true');
    await reply.status(replayed ? 200 : 201).send(toTransactionResponse(record));
  }
}
