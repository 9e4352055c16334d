import { PureQuery } from '../../common/validation';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, IsString, MaxLength, MinLength } from 'class-validator';
import { PageQueryDto } from '../../common/dto/page-query.dto';
import { IsRfc3339Instant } from './rfc3339.validator';

/** `GET /v1/events`. */
@PureQuery()
export class EventsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 100,
    example: 'opera',
    description: 'Case-insensitive substring of the event name (trigram index)',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  q?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2027-01-01T00:00:00Z',
    description: 'Only events starting strictly after this RFC 3339 instant',
  })
  @IsOptional()
  @IsRfc3339Instant()
  starts_after?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2027-02-01T00:00:00Z',
    description: 'Only events starting strictly before this RFC 3339 instant',
  })
  @IsOptional()
  @IsRfc3339Instant()
  starts_before?: string;
}
