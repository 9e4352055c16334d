import { ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { CURSOR_MAX_LENGTH } from '../keyset-cursor';

export const PAGE_LIMIT_DEFAULT = 20;
export const PAGE_LIMIT_MAX = 100;

/**
 * `limit` and `cursor` of every keyset-paginated list; a feature's query DTO extends it and adds its
 * filters. To change the default, redeclare `limit` with a new initialiser; to lower the maximum,
 * add `@Max(n)` on the redeclared property (class-validator keeps this class's rules too, so the
 * maximum can be lowered, never raised above PAGE_LIMIT_MAX).
 */
export class PageQueryDto {
  @ApiPropertyOptional({ minimum: 1, maximum: PAGE_LIMIT_MAX, default: PAGE_LIMIT_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(PAGE_LIMIT_MAX)
  limit: number = PAGE_LIMIT_DEFAULT;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: CURSOR_MAX_LENGTH,
    description: 'Opaque cursor from the previous page, with the same filters and sort',
  })
  @IsOptional()
  @IsString()
  // `?cursor=` is a 400, not the first page: this service never issues an empty cursor.
  @MinLength(1)
  @MaxLength(CURSOR_MAX_LENGTH)
  cursor?: string;
}
