import { ApiExtraModels, ApiProperty } from '@nestjs/swagger';
import { NEXT_CURSOR_DESCRIPTION } from '../../common/dto/page.dto';
import { FreshnessFields, MoneyResponseDto } from './money.response.dto';

const U64 = { type: String, pattern: '^(0|[1-9][0-9]{0,19})$' } as const;

export class ListingResponseDto {
  @ApiProperty({ ...U64, example: '42' })
  event_id: string;

  @ApiProperty({ ...U64, example: '7001' })
  ticket_id: string;

  @ApiProperty({ type: MoneyResponseDto, description: 'ask_price_minor, exact' })
  price: MoneyResponseDto;

  @ApiProperty({ type: String, nullable: true, example: '9xQeWvG816bUx9EPjHmaT23yvVM2ZWbrrpZb9PusVFin' })
  seller: string | null;

  @ApiProperty({ type: String, nullable: true, example: '1893456000', description: 'i64 as received' })
  expires_at: string | null;

  @ApiProperty({ format: 'date-time', example: '2027-01-01T11:58:00.000Z' })
  first_seen_at: string;

  @ApiProperty({
    format: 'date-time',
    example: '2027-01-01T12:00:00.000Z',
    description: 'When the upstream last returned it (at least as recent as the last completed pass)',
  })
  last_seen_at: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    example: { event_id: '42', ticket_id: '7001', ask_price_minor: '1500000', seller: '9xQe…' },
    description: 'The listing item exactly as the upstream returned it (u64 values as decimal strings)',
  })
  upstream_fields: Record<string, unknown>;
}

export class ListingDetailResponseDto extends ListingResponseDto {
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description:
      'With fresh=true: when the live re-read started (the answer reflects the upstream then); else null',
    example: null,
  })
  checked_live_at: string | null;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: '2027-01-01T12:00:00.000Z' })
  data_as_of: string | null;

  @ApiProperty({ example: false })
  stale: boolean;
}

@ApiExtraModels(ListingResponseDto)
export class ListingsPageResponseDto extends FreshnessFields {
  @ApiProperty({ type: [ListingResponseDto] })
  items: ListingResponseDto[];

  @ApiProperty({ type: String, nullable: true, description: NEXT_CURSOR_DESCRIPTION, example: null })
  next_cursor: string | null;
}
