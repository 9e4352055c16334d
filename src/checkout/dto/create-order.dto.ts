import { ApiProperty } from '@nestjs/swagger';
import { IsString, Length, Matches } from 'class-validator';
import { IsU64String } from '../../common/int64.validators';

/** `POST /v1/orders`: who buys, which listing, and the price the buyer saw. */
export class CreateOrderDto {
  @ApiProperty({ description: "The buyer's user subject (its custodial user wallet signs the purchase)" })
  @IsString()
  @Length(1, 255)
  // PostgreSQL text cannot hold NUL: refused here (400) rather than failing in the database (500).
  @Matches(/^[^\0]*$/, { message: 'buyer_subject must not contain NUL characters' })
  buyer_subject: string;

  @ApiProperty({ description: "The buyer's custodial user wallet address (receives the ticket, pays)" })
  @Matches(/^[\x21-\x7e]{1,128}$/, {
    message: 'buyer_address must be an address (1 to 128 visible characters)',
  })
  buyer_address: string;

  @ApiProperty({ example: '100000', description: 'u64 as a decimal string' })
  @IsU64String()
  event_id: string;

  @ApiProperty({ example: '1', description: 'u64 as a decimal string' })
  @IsU64String()
  ticket_id: string;

  @ApiProperty({
    example: '25000000',
    description: 'The ask price the buyer saw, exact, in minor units of the stablecoin (u64 decimal string)',
  })
  @IsU64String()
  expected_price_minor: string;
}
