import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsInt, IsOptional, IsString, Max, MaxLength, Min, MinLength } from 'class-validator';
import { IsU64String } from '../../common/int64.validators';
import { IsSubject, SUBJECT_CHARSET } from '../../common/subject';
import { IsRfc3339Instant } from '../../listings/dto/rfc3339.validator';

/** How far ahead `expires_at` may be (days). */
export const WATCH_MAX_DAYS = 366;
/** Longest cooldown (30 days, seconds). */
export const WATCH_MAX_COOLDOWN_SECONDS = 2_592_000;

/** `POST /v1/watches`: exactly one of `event_id` and `q`; at least one of `max_price_minor` and `min_drop_percent`. */
export class CreateWatchDto {
  @ApiPropertyOptional({
    example: '7000001',
    description: 'The event whose listings to watch (u64 decimal string)',
  })
  @IsOptional()
  @IsU64String()
  event_id?: string;

  @ApiPropertyOptional({
    minLength: 1,
    maxLength: 100,
    example: 'opera',
    description:
      'Instead of event_id: a case-insensitive substring of the name of an active event in the catalog, resolved to ' +
      'that event now (it must match exactly one; else a 400 naming q lists the candidates)',
  })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(100)
  q?: string;

  @ApiPropertyOptional({
    example: '80000000',
    description:
      'Alert when a listing appears at or under this price, or an active one falls to it (minor units)',
  })
  @IsOptional()
  @IsU64String()
  max_price_minor?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 99,
    example: 10,
    description: "Alert when an active listing's price falls by at least this percentage in one change",
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(99)
  min_drop_percent?: number;

  @ApiPropertyOptional({
    example: 'user-1',
    pattern: SUBJECT_CHARSET.source,
    description:
      "The end user the alert is for (echoed in every watch.matched); within the key's subject binding",
  })
  @IsOptional()
  @IsSubject()
  subject?: string;

  @ApiPropertyOptional({
    format: 'date-time',
    example: '2027-06-01T00:00:00Z',
    description: `RFC 3339, in the future and at most ${WATCH_MAX_DAYS} days ahead; after it the watch matches nothing`,
  })
  @IsOptional()
  @IsRfc3339Instant()
  expires_at?: string;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: WATCH_MAX_COOLDOWN_SECONDS,
    example: 3600,
    description:
      'After an alert, none from this watch for this many seconds (a batch then alerts its cheapest)',
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(WATCH_MAX_COOLDOWN_SECONDS)
  cooldown_seconds?: number;
}
