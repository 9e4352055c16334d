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
  @ApiProperty({ format: 'uuid' })
  id: string;
  @ApiProperty({ description: 'The event (its webhook-id)' })
  event_id: string;
  @ApiProperty()
  event_type: string;
  @ApiProperty({ enum: DELIVERY_STATUSES })
  status: string;
  @ApiProperty({ description: 'Tries started so far' })
  attempts: number;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', description: 'Next try (pending only)' })
  next_attempt_at: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' })
  last_attempt_at: string | null;
  @ApiProperty({ nullable: true, type: Number, description: "The receiver's last HTTP status" })
  last_status_code: number | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: "Bounded excerpt: the receiver's answer, the network error or the SSRF guard's refusal",
  })
  last_error: string | null;
  @ApiProperty({ nullable: true, type: Number })
  last_duration_ms: number | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time' })
  delivered_at: string | null;
  @ApiProperty({ format: 'date-time' })
  created_at: string;
}
