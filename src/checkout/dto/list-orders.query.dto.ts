import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Length, Max, MaxLength, Min } from 'class-validator';

/** `GET /v1/orders`: keyset page of the client's orders, or the one order made with `idempotency_key`. */
export class ListOrdersQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: 100, default: 20 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(100)
  limit: number = 20;

  @ApiPropertyOptional({ description: 'Opaque cursor from the previous page' })
  @IsOptional()
  @IsString()
  @MaxLength(128)
  cursor?: string;

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
