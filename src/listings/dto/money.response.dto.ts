import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { UNFORMATTED_REASON } from '../listing.mapper';

/**
 * An exact amount. `minor` is the u64 amount in minor units (decimal string); `amount` is the same value
 * in whole units, computed from the integer and `decimals` by string arithmetic (never floating point).
 * Until the protocol config is known only `minor` and `unformatted_reason` are present.
 */
export class MoneyResponseDto {
  @ApiProperty({ example: '1500000', pattern: '^(0|[1-9][0-9]{0,19})$' })
  minor: string;

  @ApiPropertyOptional({ example: 6, minimum: 0, maximum: 18, description: 'stablecoin_decimals' })
  decimals?: number;

  @ApiPropertyOptional({ example: '1.5', description: 'Exact decimal text; no trailing zeros, no exponent' })
  amount?: string;

  @ApiPropertyOptional({
    type: String,
    nullable: true,
    example: 'EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v',
    description: "The listing's stablecoin_mint when it carries one, else the protocol config's",
  })
  currency_mint?: string | null;

  @ApiPropertyOptional({ example: UNFORMATTED_REASON, description: 'Present only when amount is absent' })
  unformatted_reason?: string;
}

export class FreshnessFields {
  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    example: '2027-01-01T12:00:00.000Z',
    description:
      'Start of the last completed sync pass of this resource: every item was seen upstream at or after it. ' +
      'null: no pass has completed yet',
  })
  data_as_of: string | null;

  @ApiProperty({
    example: false,
    description: 'true when data_as_of is older than SYNC_STALE_AFTER_MS or null',
  })
  stale: boolean;
}
