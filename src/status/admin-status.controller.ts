import { Controller, Get } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { RequireScope } from '../auth/access.decorators';
import { STATUS_REPORT_EXAMPLE, STATUS_REPORT_SCHEMA } from './status.openapi';
import type { StatusReport } from './status.report';
import { StatusService } from './status.service';

/** The status page's figures as JSON, for automation (docs/status.md); served whatever STATUS_PAGE_ENABLED says. */
@ApiTags('admin')
@RequireScope('admin')
@Controller('v1/admin/status')
export class AdminStatusController {
  constructor(private readonly status: StatusService) {}

  @Get()
  @ApiOperation({
    operationId: 'getAdminStatus',
    summary: 'Operator status: catalog sync, orders, upstream, webhooks and replicas, with per-minute series',
  })
  @ApiOkResponse({ schema: STATUS_REPORT_SCHEMA, example: STATUS_REPORT_EXAMPLE })
  report(): Promise<StatusReport> {
    return this.status.report();
  }
}
