import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, Matches, Max, MaxLength, Min } from 'class-validator';

export const API_CLIENTS_PAGE_MAX = 100;

export class ListApiClientsQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: API_CLIENTS_PAGE_MAX, default: 50 })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(API_CLIENTS_PAGE_MAX)
  limit = 50;

  @ApiPropertyOptional({ description: 'Opaque cursor from the previous page (`nextCursor`)' })
  @IsOptional()
  @MaxLength(128)
  @Matches(/^[A-Za-z0-9_-]+$/, { message: 'cursor is not a valid cursor' })
  cursor?: string;
}
