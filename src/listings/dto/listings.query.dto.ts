import { PureQuery } from '../../common/validation';
import { ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { LISTING_SORTS, type ListingSort } from '../../catalog-sync/catalog-mirror.types';
import { PageQueryDto } from '../../common/dto/page-query.dto';
import { IsU64String } from '../../common/int64.validators';

/** `GET /v1/listings` and `GET /v1/events/{event_id}/listings`. */
@PureQuery()
export class ListingsQueryDto extends PageQueryDto {
  @ApiPropertyOptional({
    enum: LISTING_SORTS,
    default: 'price_asc',
    description:
      'price_asc: lowest ask first; price_desc: highest first; newest: most recently first seen first. ' +
      'Ties are broken by event_id, then ticket_id, in the same direction.',
  })
  @IsOptional()
  @IsIn(LISTING_SORTS)
  sort: ListingSort = 'price_asc';

  @ApiPropertyOptional({
    type: String,
    pattern: '^(0|[1-9][0-9]{0,19})$',
    example: '1000000',
    description: 'Lowest ask, inclusive, in minor units (u64 decimal string)',
  })
  @IsOptional()
  @IsU64String()
  min_price?: string;

  @ApiPropertyOptional({
    type: String,
    pattern: '^(0|[1-9][0-9]{0,19})$',
    example: '25000000',
    description: 'Highest ask, inclusive, in minor units (u64 decimal string); not below min_price',
  })
  @IsOptional()
  @IsU64String()
  max_price?: string;

  @ApiPropertyOptional({
    enum: ['true', 'false'],
    default: 'false',
    description:
      "Only on an event's listing page. true: walk the event's listings upstream first (single-flight, within " +
      'LISTINGS_FRESH_TIMEOUT_MS); if the walk does not complete in time, the page comes from the mirror with ' +
      'stale: true. Never answered from a client cache (max-age 0).',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  fresh?: 'true' | 'false';
}

/** `GET /v1/listings/{event_id}/{ticket_id}`. */
@PureQuery()
export class ListingQueryDto {
  @ApiPropertyOptional({
    enum: ['true', 'false'],
    default: 'false',
    description:
      'true: re-read the listing live from the upstream (one bounded walk of its event) and update the mirror ' +
      'when it differs; never served from a cache',
  })
  @IsOptional()
  @IsIn(['true', 'false'])
  fresh?: 'true' | 'false';
}
