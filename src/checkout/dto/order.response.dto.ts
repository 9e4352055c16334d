import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ORDER_STATES, type OrderState } from '../order.entity';

/*
 * The documented shape of `OrderResponse` (order.mapper.ts builds it): the OpenAPI document and the generated
 * client read these classes; the mapper's interface stays the source the code compiles against.
 */

const U64 = { type: String, pattern: '^(0|[1-9][0-9]{0,19})$' } as const;

export class OrderMoneyDto {
  @ApiProperty({ ...U64, example: '25000000', description: 'Minor units (u64 decimal string)' })
  minor: string;

  @ApiProperty({
    type: String,
    nullable: true,
    example: '25',
    description: 'Exact decimal text in token units; null while the decimals are unknown',
  })
  amount: string | null;

  @ApiProperty({ type: Number, nullable: true, example: 6 })
  decimals: number | null;
}

export class OrderBuyerDto {
  @ApiProperty({ example: 'user-1' })
  subject: string;

  @ApiProperty({ example: 'Buyer1111111111111111111111111111111111111' })
  address: string;
}

export class OrderFailureDto {
  @ApiProperty({ example: 'PRICE_CHANGED' })
  code: string;

  @ApiProperty({ example: 'The ask price is now 26000000 (you saw 25000000)' })
  reason: string;
}

export class OrderTransactionDto {
  @ApiProperty({ type: String, nullable: true, example: 'ctx_8f3a2b1c' })
  custodial_transaction_id: string | null;

  @ApiProperty({ type: String, nullable: true, example: '5VERv8NMvzbJMEkV8xnrLkEaWRtSz9CosKDYjCJjBRnb' })
  transaction_signature: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'confirmed', description: "The upstream's status" })
  upstream_status: string | null;
}

export class OrderPreviousAttemptDto {
  @ApiProperty({ example: 1 })
  attempt: number;

  @ApiProperty({ type: String, nullable: true, example: 'order-0b7e5c1a-1' })
  upstream_idempotency_key: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'ctx_8f3a2b1c' })
  custodial_transaction_id: string | null;

  @ApiProperty({ type: String, nullable: true, example: null })
  transaction_signature: string | null;

  @ApiProperty({ type: String, nullable: true, example: 'expired' })
  upstream_status: string | null;
}

export class OrderStepDto {
  @ApiProperty({ format: 'date-time', example: '2027-01-01T12:00:00.120Z' })
  at: string;

  @ApiProperty({ example: 1 })
  attempt: number;

  @ApiProperty({ example: 'revalidate' })
  step: string;

  @ApiProperty({ enum: ORDER_STATES, example: 'revalidated' })
  state: OrderState;

  @ApiProperty({ type: String, nullable: true, example: null })
  detail: string | null;
}

/** An order as `POST /v1/orders`, `GET /v1/orders` and `GET /v1/orders/{id}` show it (docs/checkout.md). */
export class OrderResponseDto {
  @ApiProperty({ format: 'uuid', example: '0b7e5c1a-3f2d-4c8e-9a6b-1d2e3f4a5b6c' })
  id: string;

  @ApiProperty({ example: 'checkout-7f9c2e', description: 'The Idempotency-Key it was created with' })
  idempotency_key: string;

  @ApiProperty({ enum: ORDER_STATES, example: 'confirmed' })
  state: OrderState;

  @ApiProperty({
    example: true,
    description: 'confirmed, landed_with_error, rejected or failed: never changes again',
  })
  final: boolean;

  @ApiProperty({ example: 'Purchase complete: the ticket is yours and the seller has been paid.' })
  meaning: string;

  @ApiProperty({ example: 1, description: 'Purchase attempt (a new one after an expired transaction)' })
  attempt: number;

  @ApiProperty({ type: OrderBuyerDto })
  buyer: OrderBuyerDto;

  @ApiProperty({ ...U64, example: '100000' })
  event_id: string;

  @ApiProperty({ ...U64, example: '1' })
  ticket_id: string;

  @ApiProperty({ type: OrderMoneyDto, description: 'The price the buyer saw (and pays at most)' })
  expected_price: OrderMoneyDto;

  @ApiProperty({
    type: OrderMoneyDto,
    nullable: true,
    example: null,
    description: 'The live ask when it differed (a rejection for a price change)',
  })
  current_price: OrderMoneyDto | null;

  @ApiProperty({ type: OrderFailureDto, nullable: true, example: null })
  failure: OrderFailureDto | null;

  @ApiProperty({ type: OrderTransactionDto, nullable: true, description: 'null until signed' })
  transaction: OrderTransactionDto | null;

  @ApiProperty({ type: [OrderPreviousAttemptDto], example: [] })
  previous_attempts: OrderPreviousAttemptDto[];

  @ApiProperty({ format: 'date-time', example: '2027-01-01T12:00:00.000Z' })
  created_at: string;

  @ApiProperty({ format: 'date-time', example: '2027-01-01T12:00:02.500Z' })
  updated_at: string;

  @ApiProperty({ type: String, nullable: true, format: 'date-time', example: '2027-01-01T12:00:02.500Z' })
  final_at: string | null;

  @ApiPropertyOptional({ type: [OrderStepDto], description: 'The audit trail, with `?steps=true` only' })
  steps?: OrderStepDto[];
}
