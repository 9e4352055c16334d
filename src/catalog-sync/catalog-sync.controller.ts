import { Body, Controller, Get, HttpCode, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../auth/access.decorators';
import { ApiErrorResponse } from '../common/openapi';
import { SyncPassNotFoundError } from './catalog-sync.errors';
import { CatalogSyncService } from './catalog-sync.service';
import {
  ResourceSyncStatusDto,
  StartedSyncPassDto,
  SyncPassDto,
  SyncStatusResponseDto,
  TriggerSyncResponseDto,
} from './dto/sync-pass.response.dto';
import { TriggerSyncDto } from './dto/trigger-sync.dto';

/** Operator API of the catalog sync (admin scope). */
@ApiTags('admin')
@RequireScope('admin')
@Controller('v1/admin/sync')
export class CatalogSyncController {
  constructor(private readonly sync: CatalogSyncService) {}

  @Post()
  @HttpCode(202)
  @ApiOperation({
    operationId: 'triggerSync',
    summary: "Start a pass now (events, listings, both, or one event's listings)",
  })
  @ApiAcceptedResponse({ type: TriggerSyncResponseDto })
  @ApiErrorResponse(409, 'CONFLICT: a pass for that scope is already running; `details.passId` names it')
  async trigger(@Body() body: TriggerSyncDto): Promise<TriggerSyncResponseDto> {
    const eventId = body.event_id === undefined ? null : BigInt(body.event_id);
    const passes = await this.sync.trigger(body.resource, eventId);
    const first = passes.find((p) => !p.alreadyRunning);
    return { passId: first?.passId ?? '', passes: passes.map((p) => StartedSyncPassDto.from(p)) };
  }

  @Get()
  @ApiOperation({
    operationId: 'getSyncStatus',
    summary: 'Per resource: last complete pass, running passes with progress, lag, failures',
  })
  @ApiOkResponse({ type: SyncStatusResponseDto })
  async status(): Promise<SyncStatusResponseDto> {
    const resources = await this.sync.status();
    return { resources: resources.map((r) => ResourceSyncStatusDto.from(r)) };
  }

  @Get(':id')
  @ApiOperation({ operationId: 'getSyncPass', summary: 'One sync pass' })
  @ApiOkResponse({ type: SyncPassDto })
  @ApiErrorResponse(404, 'NOT_FOUND: no pass with this id')
  async pass(@Param('id') id: string): Promise<SyncPassDto> {
    if (!/^[1-9][0-9]{0,17}$/.test(id)) throw new SyncPassNotFoundError();
    return SyncPassDto.from(await this.sync.pass(id));
  }
}
