import { Body, Controller, Delete, Get, HttpCode, Param, ParseUUIDPipe, Post, Query } from '@nestjs/common';
import { ApiCreatedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { AppError } from '../common/app-error';
import { KeysetCursorCodec } from '../common/keyset-cursor';
import { keysetPage } from '../common/keyset-page';
import { ApiErrorResponse } from '../common/openapi';
import { validationFailed } from '../common/validation';
import { RequireScope } from './access.decorators';
import { ApiKeyAuthenticator } from './api-key.authenticator';
import { apiClientAfter, apiClientListBinding, apiClientPosition } from './api-client.cursor';
import { ApiClientsService } from './api-clients.service';
import type { ClientContext } from './client-context';
import { CurrentClient } from './current-client.decorator';
import { CreateApiClientDto } from './dto/create-api-client.dto';
import {
  ApiClientPageDto,
  ApiClientResponseDto,
  CreatedApiClientResponseDto,
} from './dto/api-client.response.dto';
import { ListApiClientsQueryDto } from './dto/list-api-clients.query.dto';
import { SubjectBindingInputDto } from './dto/subject-binding.dto';
import { ANY_SUBJECT } from './subject-binding';

/** A malformed id is answered like an unknown one: the caller learns nothing either way. */
const clientId = new ParseUUIDPipe({
  exceptionFactory: () => new AppError('NOT_FOUND', 'API client not found'),
});

/**
 * Key management over HTTP. Keys issued here are owned by the issuing admin client: another admin
 * key sees 404 for them (the `keys` CLI, run by an operator with database access, sees all).
 * Revoking a key revokes every key it issued, transitively: no key outlives the key that issued it.
 */
@ApiTags('admin')
@RequireScope('admin')
@Controller('v1/admin/api-clients')
export class AdminApiClientsController {
  constructor(
    private readonly clients: ApiClientsService,
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly cursors: KeysetCursorCodec,
  ) {}

  @Post()
  @ApiOperation({
    operationId: 'createApiClient',
    summary: 'Issue a new API key (shown once in this response)',
  })
  @ApiCreatedResponse({ type: CreatedApiClientResponseDto })
  @ApiErrorResponse(
    400,
    'VALIDATION_FAILED: names the field (a malformed binding pattern, a binding on an admin key, a write key ' +
      'with neither a binding nor `anySubject: true`, both)',
  )
  async create(
    @CurrentClient() caller: ClientContext,
    @Body() body: CreateApiClientDto,
  ): Promise<CreatedApiClientResponseDto> {
    if (body.binding && body.anySubject === true)
      throw validationFailed([
        { field: 'anySubject', problems: ['anySubject: true and a binding exclude each other'] },
      ]);
    const binding = body.binding ? SubjectBindingInputDto.toBinding(body.binding) : null;
    const request = body.anySubject === true ? ANY_SUBJECT : binding;
    const issued = await this.clients.issue(body.name, body.scopes, caller.id, request);
    return Object.assign(ApiClientResponseDto.from(issued.client), { key: issued.key });
  }

  @Get()
  @ApiOperation({
    operationId: 'listApiClients',
    summary: 'Keys issued by the calling admin client, newest first (no secrets)',
  })
  @ApiOkResponse({ type: ApiClientPageDto })
  async list(
    @CurrentClient() caller: ClientContext,
    @Query() query: ListApiClientsQueryDto,
  ): Promise<ApiClientPageDto> {
    const binding = apiClientListBinding(caller.id);
    const after = query.cursor ? apiClientAfter(this.cursors.decode(query.cursor, binding)) : undefined;
    const rows = await this.clients.list(query.limit + 1, { createdBy: caller.id, after });
    const page = keysetPage(rows, query.limit, apiClientPosition, this.cursors, binding);
    // This endpoint predates the shared `next_cursor` and keeps its published camelCase name.
    return { items: page.items.map((v) => ApiClientResponseDto.from(v)), nextCursor: page.next_cursor };
  }

  @Get(':id')
  @ApiOperation({
    operationId: 'getApiClient',
    summary: 'One key issued by the calling admin client (no secret)',
  })
  @ApiOkResponse({ type: ApiClientResponseDto })
  @ApiErrorResponse(404, 'NOT_FOUND: no key with this id was issued by the calling client')
  async get(
    @CurrentClient() caller: ClientContext,
    @Param('id', clientId) id: string,
  ): Promise<ApiClientResponseDto> {
    const found = await this.clients.get(id, caller.id);
    if (!found) throw new AppError('NOT_FOUND', 'API client not found');
    return ApiClientResponseDto.from(found);
  }

  @Delete(':id')
  @HttpCode(200)
  @ApiOperation({
    operationId: 'revokeApiClient',
    summary:
      'Revoke a key issued by the calling admin client, and every key it issued in turn ' +
      '(effective on the next request)',
  })
  @ApiOkResponse({ type: ApiClientResponseDto })
  @ApiErrorResponse(404, 'NOT_FOUND: no key with this id was issued by the calling client')
  async revoke(
    @CurrentClient() caller: ClientContext,
    @Param('id', clientId) id: string,
  ): Promise<ApiClientResponseDto> {
    const revoked = await this.clients.revoke(id, caller.id);
    if (!revoked) throw new AppError('NOT_FOUND', 'API client not found');
    for (const revokedId of [revoked.id, ...revoked.alsoRevoked]) this.authenticator.invalidate(revokedId);
    return ApiClientResponseDto.from(revoked);
  }
}
