import { ApiProperty } from '@nestjs/swagger';
import { NEXT_CURSOR_DESCRIPTION } from '../../common/dto/page.dto';
import { FreshnessFields, MoneyResponseDto } from './money.response.dto';

export class EventResponseDto {
  @ApiProperty({ type: String, pattern: '^(0|[1-9][0-9]{0,19})$', example: '42' })
  event_id: string;

  @ApiProperty({ example: 'La Traviata — opening night' })
  name: string;

  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    example: '2027-03-01T19:30:00.000Z',
    description: 'null when the upstream start_at is not an RFC 3339 instant (such events are listed last)',
  })
  start_at: string | null;

  @ApiProperty({ example: '2027-03-01T20:30:00+01:00', description: 'start_at exactly as received' })
  start_at_raw: string;

  @ApiProperty({ format: 'date-time', example: '2026-12-01T08:00:00.000Z' })
  first_seen_at: string;

  @ApiProperty({ format: 'date-time', example: '2027-01-01T12:00:00.000Z' })
  last_seen_at: string;
}

export class ListingSummaryDto {
  @ApiProperty({ example: 120 })
  active_listings: number;

  @ApiProperty({ type: MoneyResponseDto, nullable: true })
  lowest_ask: MoneyResponseDto | null;

  @ApiProperty({ type: MoneyResponseDto, nullable: true })
  highest_ask: MoneyResponseDto | null;
}

export class EventDetailResponseDto extends EventResponseDto {
  @ApiProperty({ type: ListingSummaryDto })
  listing_summary: ListingSummaryDto;

  @ApiProperty({
    type: String,
    nullable: true,
    format: 'date-time',
    description: 'The older of the events and listings passes this answer is built from',
    example: '2027-01-01T12:00:00.000Z',
  })
  data_as_of: string | null;

  @ApiProperty({ example: false })
  stale: boolean;
}

export class EventsPageResponseDto extends FreshnessFields {
  @ApiProperty({ type: [EventResponseDto] })
  items: EventResponseDto[];

  @ApiProperty({ type: String, nullable: true, description: NEXT_CURSOR_DESCRIPTION, example: null })
  next_cursor: string | null;
}
