import { ApiProperty } from '@nestjs/swagger';
import { Matches } from 'class-validator';
import { IsU64String, parseU64String } from '../../common/int64.validators';
import { isSafeSubject, IsSubject, SUBJECT_CHARSET } from '../../common/subject';
import { FastBodyCheck } from '../../common/validation';

const FIELDS = ['buyer_subject', 'buyer_address', 'event_id', 'ticket_id', 'expected_price_minor'] as const;
const ADDRESS = /^[\x21-\x7e]{1,128}$/;

/**
 * Whether class-validator would accept `body` as it is (FastBodyCheck): exactly the five fields, each valid by
 * the decorators below (`buyer_subject`: the one subject rule, common/subject.ts).
 */
export function isValidCreateOrderBody(body: Record<string, unknown>): boolean {
  if (Object.keys(body).length !== FIELDS.length) return false;
  for (const field of FIELDS) if (!Object.hasOwn(body, field)) return false;
  const subject = body.buyer_subject;
  const address = body.buyer_address;
  return (
    isSafeSubject(subject) &&
    typeof address === 'string' &&
    ADDRESS.test(address) &&
    parseU64String(body.event_id) !== undefined &&
    parseU64String(body.ticket_id) !== undefined &&
    parseU64String(body.expected_price_minor) !== undefined
  );
}

/** `POST /v1/orders`: who buys, which listing, and the price the buyer saw. */
@FastBodyCheck(isValidCreateOrderBody)
export class CreateOrderDto {
  @ApiProperty({
    description: "The buyer's user subject (its custodial user wallet signs the purchase)",
    example: 'user-1',
    pattern: SUBJECT_CHARSET.source,
  })
  @IsSubject()
  buyer_subject: string;

  @ApiProperty({
    description: "The buyer's custodial user wallet address (receives the ticket, pays)",
    example: 'Buyer1111111111111111111111111111111111111',
  })
  @Matches(ADDRESS, {
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
