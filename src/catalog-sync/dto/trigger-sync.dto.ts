import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsIn, IsOptional, Matches } from 'class-validator';

export const TRIGGER_RESOURCES = ['events', 'listings', 'all'] as const;

/** `POST /v1/admin/sync` body. */
export class TriggerSyncDto {
  @ApiProperty({ enum: TRIGGER_RESOURCES })
  @IsIn(TRIGGER_RESOURCES, { message: `resource must be one of ${TRIGGER_RESOURCES.join(', ')}` })
  resource: (typeof TRIGGER_RESOURCES)[number];

  @ApiPropertyOptional({
    description: 'With resource "listings": refresh only this event\'s listings (u64 as a decimal string)',
    example: '18446744073709551615',
  })
  @IsOptional()
  @Matches(/^(0|[1-9][0-9]{0,19})$/, { message: 'event_id must be a u64 decimal string' })
  event_id?: string;
}
