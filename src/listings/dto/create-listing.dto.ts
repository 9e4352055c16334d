import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, Matches, ValidateIf } from 'class-validator';
import { IsI64String, IsU64String } from '../../common/int64.validators';
import { IsSubject, SUBJECT_CHARSET } from '../../common/subject';

/** A ledger address as accepted here: 1..128 visible characters (the contract says only "string"). */
export const ADDRESS_PATTERN = /^[\x21-\x7e]{1,128}$/;
const ADDRESS_MESSAGE = (field: string): string =>
  `${field} must be an address (1 to 128 visible characters)`;

/** The seller: the user subject whose custodial wallet signs, and that wallet's address. */
export class SellerDto {
  @ApiProperty({
    description: "The seller's user subject (its custodial user wallet signs)",
    example: 'user-7',
    pattern: SUBJECT_CHARSET.source,
  })
  @IsSubject()
  seller_subject: string;

  @ApiProperty({
    description: "The seller's custodial user wallet address (owner of the ticket)",
    example: 'Seller111111111111111111111111111111111111',
  })
  @Matches(ADDRESS_PATTERN, { message: ADDRESS_MESSAGE('seller_address') })
  seller_address: string;
}

/**
 * `POST /v1/listings`. Integrator-level addresses (identity, authority, storage fee payer, stablecoin
 * mint) are never taken from the caller: they come from configuration or the protocol config.
 */
export class CreateListingDto extends SellerDto {
  @ApiProperty({ example: '100000', description: 'u64 as a decimal string' })
  @IsU64String()
  event_id: string;

  @ApiProperty({ example: '1', description: 'u64 as a decimal string' })
  @IsU64String()
  ticket_id: string;

  @ApiProperty({ example: '25000000', description: 'Exact price in minor units of the stablecoin (u64 > 0)' })
  @IsU64String()
  @Matches(/^[1-9]/, { message: 'ask_price_minor must be greater than 0' })
  ask_price_minor: string;

  @ApiProperty({
    description: 'Token account the sale proceeds are paid to',
    example: 'Payout11111111111111111111111111111111111',
  })
  @Matches(ADDRESS_PATTERN, { message: ADDRESS_MESSAGE('payout_ata') })
  payout_ata: string;

  @ApiProperty({
    example: '1798761600',
    description:
      'When the listing stops being active: unix time in SECONDS (i64 decimal string), in the future and at ' +
      'most SELLING_MAX_EXPIRY_SECONDS (default 366 days) ahead',
  })
  @IsI64String()
  expires_at: string;

  @ApiPropertyOptional({ nullable: true, description: 'Only this buyer address may buy (null: anyone)' })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @Matches(ADDRESS_PATTERN, { message: ADDRESS_MESSAGE('buyer_allow') })
  buyer_allow?: string | null;

  @ApiPropertyOptional({
    nullable: true,
    description: "The event's ticket type config; omitted: taken from the upstream event",
  })
  @IsOptional()
  @ValidateIf((_o, v) => v !== null)
  @Matches(ADDRESS_PATTERN, { message: ADDRESS_MESSAGE('ticket_type_config') })
  ticket_type_config?: string | null;
}

/** `POST /v1/listings/{event_id}/{ticket_id}/cancel`: the seller cancels through its own wallet. */
export class CancelListingDto extends SellerDto {}
