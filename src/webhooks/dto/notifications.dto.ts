import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { CURSOR_MAX_LENGTH } from '../../common/keyset-cursor';
import { EVENT_TYPES } from '../webhook-events';

export const FEED_LIMIT_DEFAULT = 100;
export const FEED_LIMIT_MAX = 500;

/** `GET /v1/notifications?after=&limit=`. */
export class NotificationsQueryDto {
  @ApiPropertyOptional({
    minLength: 1,
    maxLength: CURSOR_MAX_LENGTH,
    description: 'The `next_cursor` of the previous answer; absent: from the oldest event kept',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(CURSOR_MAX_LENGTH)
  after?: string;

  @ApiPropertyOptional({ minimum: 1, maximum: FEED_LIMIT_MAX, default: FEED_LIMIT_DEFAULT })
  @IsOptional()
  @Type(() => Number)
  @IsInt()
  @Min(1)
  @Max(FEED_LIMIT_MAX)
  limit: number = FEED_LIMIT_DEFAULT;
}

export class EventEnvelopeDto {
  @ApiProperty({
    example: 'evt_0f8e2c1b7a6d4e3f9a8b7c6d5e4f3a2b',
    description: 'The webhook-id: dedupe by it',
  })
  id: string;
  @ApiProperty({ enum: EVENT_TYPES })
  type: string;
  @ApiProperty({ description: 'Version of the `data` shape of this type', example: 1 })
  version: number;
  @ApiProperty({
    format: 'date-time',
    description: 'Database clock, in the transaction that made the change',
    example: '2027-01-01T12:00:00.000Z',
  })
  occurred_at: string;
  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'Small: ids, state, exact money strings',
    example: { order_id: '0b7e5c1a-3f2d-4c8e-9a6b-1d2e3f4a5b6c', state: 'confirmed' },
  })
  data: Record<string, unknown>;
}

export class FeedPageDto {
  @ApiProperty({ type: [EventEnvelopeDto] })
  items: EventEnvelopeDto[];
  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'Pass as `after` to resume: after the last item, or the same cursor again when nothing new committed yet',
    example: 'eyJwIjoxMjN9.c2ln',
  })
  next_cursor: string | null;
  @ApiProperty({ description: 'More events are available now after next_cursor', example: false })
  has_more: boolean;
}
