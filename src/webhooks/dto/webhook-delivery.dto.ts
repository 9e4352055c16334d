import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional } from 'class-validator';
import { PageQueryDto } from '../../common/dto/page-query.dto';

export const DELIVERY_STATUSES = ['pending', 'delivered', 'failed'] as const;

/** `GET /v1/webhooks/endpoints/{id}/deliveries`: newest first, optionally of one status. */
export class ListDeliveriesQueryDto extends PageQueryDto {
  @ApiPropertyOptional({ enum: DELIVERY_STATUSES })
  @IsOptional()
  @IsIn(DELIVERY_STATUSES)
  status?: (typeof DELIVERY_STATUSES)[number];
}

export class WebhookDeliveryResponseDto {
  @ApiProperty({ format: 'uuid', example: '7a1b2c3d-4e5f-4061-8a7b-9c0d1e2f3a4b' })
  id: string;
  @ApiProperty({ description: 'The event (its webhook-id)', example: 'evt_0f8e2c1b7a6d4e3f9a8b7c6d5e4f3a2b' })
  event_id: string;
  @ApiProperty({ example: 'order.confirmed' })
  event_type: string;
  @ApiProperty({ enum: DELIVERY_STATUSES })
  status: string;
  @ApiProperty({ description: 'Tries started so far', example: 1 })
  attempts: number;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'Next try (pending only)',
    example: null,
  })
  next_attempt_at: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: '2027-01-01T12:00:00.000Z' })
  last_attempt_at: string | null;
  @ApiProperty({ nullable: true, type: Number, description: "The receiver's last HTTP status", example: 200 })
  last_status_code: number | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "Bounded excerpt: the receiver's answer, the network error or the SSRF guard's refusal",
    example: null,
  })
  last_error: string | null;
  @ApiProperty({ nullable: true, type: Number, example: 38 })
  last_duration_ms: number | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: '2027-01-01T12:00:00.000Z' })
  delivered_at: string | null;
  @ApiProperty({ format: 'date-time', example: '2027-01-01T11:59:59.000Z' })
  created_at: string;
}
