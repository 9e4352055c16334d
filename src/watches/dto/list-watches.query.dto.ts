import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { PageQueryDto } from '../../common/dto/page-query.dto';
import { IsU64String } from '../../common/int64.validators';
import { IsSubject, SUBJECT_CHARSET } from '../../common/subject';

/** `GET /v1/watches`: keyset page of the client's watches (newest first), optionally of one subject or event. */
export class ListWatchesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ example: 'user-1', pattern: SUBJECT_CHARSET.source })
  @IsOptional()
  @IsSubject()
  subject?: string;

  @ApiPropertyOptional({ example: '7000001' })
  @IsOptional()
  @IsU64String()
  event_id?: string;
}
