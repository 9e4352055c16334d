import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, Length, MaxLength } from 'class-validator';
import { PageQueryDto } from '../../common/dto/page-query.dto';

/** `GET /v1/orders`: keyset page of the client's orders (newest first), or the one made with `idempotency_key`. */
export class ListOrdersQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ description: 'The Idempotency-Key the order was created with' })
  @IsOptional()
  @IsString()
  @Length(1, 255)
  idempotency_key?: string;
}

/** `GET /v1/orders/{id}?wait=5s`: hold the request until the state changes (bounded by CHECKOUT_MAX_WAIT_MS). */
export class GetOrderQueryDto {
  @ApiPropertyOptional({ example: '5s', description: 'Long-poll: 5s, 500ms or 5 (seconds)' })
  @IsOptional()
  @IsString()
  @MaxLength(16)
  wait?: string;

  @ApiPropertyOptional({ description: 'Include the audit trail (`steps`)', example: 'true' })
  @IsOptional()
  @IsString()
  @MaxLength(5)
  steps?: string;
}
