import { ApiPropertyOptional } from '@nestjs/swagger';
import { PAGE_LIMIT_MAX, PageQueryDto } from '../../common/dto/page-query.dto';

/** `GET /v1/admin/api-clients`: the shared page query, with this list's historical default of 50. */
export class ListApiClientsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: PAGE_LIMIT_MAX, default: 50 })
  override limit = 50;
}
