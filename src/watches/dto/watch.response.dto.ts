import { ApiProperty } from '@nestjs/swagger';

/** A watch as `POST`, `GET` and the list return it. */
export class WatchResponseDto {
  @ApiProperty({ format: 'uuid', example: '0b7e5c1a-3f2d-4c8e-9a6b-1d2e3f4a5b6c' })
  id: string;
  @ApiProperty({ example: '7000001' })
  event_id: string;
  @ApiProperty({
    nullable: true,
    type: String,
    example: null,
    description: 'The name search it was resolved from',
  })
  q: string | null;
  @ApiProperty({ nullable: true, type: String, example: '80000000' })
  max_price_minor: string | null;
  @ApiProperty({ nullable: true, type: 'integer', example: null })
  min_drop_percent: number | null;
  @ApiProperty({ nullable: true, type: String, example: 'user-1' })
  subject: string | null;
  @ApiProperty({ nullable: true, type: 'integer', example: null })
  cooldown_seconds: number | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: '2027-06-01T00:00:00.000Z' })
  expires_at: string | null;
  @ApiProperty({ example: false, description: 'Past expires_at: it matches nothing any more' })
  expired: boolean;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    example: null,
    description: 'When it last announced a watch.matched (database clock)',
  })
  last_alerted_at: string | null;
  @ApiProperty({ format: 'date-time', example: '2027-01-01T12:00:00.000Z' })
  created_at: string;
}
