import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  IsArray,
  IsBoolean,
  IsIn,
  IsInt,
  IsNotEmpty,
  IsOptional,
  IsRFC3339,
  IsString,
  Max,
  MaxLength,
  Min,
  MinLength,
} from 'class-validator';
import { IsU64String } from '../../common/int64.validators';
import { MAX_URL_LENGTH } from '../endpoint-url';
import { MAX_EVENT_IDS, SUBSCRIBABLE_EVENT_TYPES } from '../webhook-events';

const URL_DOC =
  'https:// URL the signed events are POSTed to (http:// to a loopback host outside production only). Never ' +
  'a link-local, metadata or (in production) private address, checked again at every send.';
const RATE_LIMIT_DOC =
  'Messages per second at most (1..1000) sent to this endpoint, across every replica; deliveries over it wait ' +
  'for their turn (never dropped, no attempt counted). Absent or null: no limit but the in-flight cap.';
const TYPES_DOC =
  'Event types to receive; empty or absent: every type except the catalog events (docs/webhooks.md lists them)';
const EVENT_IDS_DOC =
  'Catalog events (listing.*, event.*) of these events only (u64 decimal strings, at most ' +
  `${MAX_EVENT_IDS}). Empty or absent: catalog events only of the catalog types named in event_types, of every ` +
  'event. Other event types are not filtered by it.';

/** `POST /v1/webhooks/endpoints`. */
export class CreateWebhookEndpointDto {
  @ApiProperty({
    maxLength: MAX_URL_LENGTH,
    example: 'https://marketplace.example/hooks/bff',
    description: URL_DOC,
  })
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_URL_LENGTH)
  url: string;

  @ApiPropertyOptional({ maxLength: 500, example: 'order updates for the storefront' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string;

  @ApiPropertyOptional({
    enum: SUBSCRIBABLE_EVENT_TYPES,
    isArray: true,
    maxItems: 20,
    description: TYPES_DOC,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsIn(SUBSCRIBABLE_EVENT_TYPES, { each: true })
  event_types?: string[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_EVENT_IDS,
    example: ['7000001'],
    description: EVENT_IDS_DOC,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_EVENT_IDS)
  @IsU64String({ each: true })
  event_ids?: string[];

  @ApiPropertyOptional({ default: true })
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 1000,
    nullable: true,
    example: 10,
    description: RATE_LIMIT_DOC,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  rate_limit?: number | null;
}

/** `PATCH /v1/webhooks/endpoints/{id}`: only the fields given change; `enabled: true` clears a disabled reason. */
export class UpdateWebhookEndpointDto {
  @ApiPropertyOptional({ maxLength: MAX_URL_LENGTH, description: URL_DOC })
  @IsOptional()
  @IsString()
  @MinLength(1)
  @MaxLength(MAX_URL_LENGTH)
  url?: string;

  @ApiPropertyOptional({ maxLength: 500, nullable: true, type: String, description: 'null clears it' })
  @IsOptional()
  @IsString()
  @MaxLength(500)
  description?: string | null;

  @ApiPropertyOptional({
    enum: SUBSCRIBABLE_EVENT_TYPES,
    isArray: true,
    maxItems: 20,
    description: TYPES_DOC,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(20)
  @IsIn(SUBSCRIBABLE_EVENT_TYPES, { each: true })
  event_types?: string[];

  @ApiPropertyOptional({
    type: [String],
    maxItems: MAX_EVENT_IDS,
    example: ['7000001'],
    description: EVENT_IDS_DOC,
  })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(MAX_EVENT_IDS)
  @IsU64String({ each: true })
  event_ids?: string[];

  @ApiPropertyOptional()
  @IsOptional()
  @IsBoolean()
  enabled?: boolean;

  @ApiPropertyOptional({
    type: 'integer',
    minimum: 1,
    maximum: 1000,
    nullable: true,
    example: 10,
    description: `${RATE_LIMIT_DOC} null removes it.`,
  })
  @IsOptional()
  @IsInt()
  @Min(1)
  @Max(1000)
  rate_limit?: number | null;
}

export class WebhookEndpointResponseDto {
  @ApiProperty({ format: 'uuid', example: '0b7e5c1a-3f2d-4c8e-9a6b-1d2e3f4a5b6c' })
  id: string;
  @ApiProperty({ example: 'https://marketplace.example/hooks/bff' })
  url: string;
  @ApiProperty({ nullable: true, type: String, example: 'order updates for the storefront' })
  description: string | null;
  @ApiProperty({ type: [String], description: 'Empty: every type', example: ['order.confirmed'] })
  event_types: string[];
  @ApiProperty({ type: [String], description: EVENT_IDS_DOC, example: ['7000001'] })
  event_ids: string[];
  @ApiProperty({
    description: 'Operator events (sync.*) reach it: created with an admin key',
    example: false,
  })
  operator_events: boolean;
  @ApiProperty({ example: true })
  enabled: boolean;
  @ApiProperty({ nullable: true, type: 'integer', example: 10, description: RATE_LIMIT_DOC })
  rate_limit: number | null;
  @ApiProperty({
    nullable: true,
    type: String,
    description: 'Why it is disabled (by its owner, or failing too long)',
    example: null,
  })
  disabled_reason: string | null;
  @ApiProperty({ nullable: true, type: String, format: 'date-time', example: null })
  disabled_at: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'Start of the current run of failures',
    example: null,
  })
  failing_since: string | null;
  @ApiProperty({
    nullable: true,
    type: String,
    format: 'date-time',
    description: 'Until then the rotated-out secret signs alongside the current one',
    example: null,
  })
  previous_secret_expires_at: string | null;
  @ApiProperty({ format: 'date-time', example: '2027-01-01T12:00:00.000Z' })
  created_at: string;
  @ApiProperty({ format: 'date-time', example: '2027-01-01T12:00:00.000Z' })
  updated_at: string;
}

export class CreatedWebhookEndpointResponseDto extends WebhookEndpointResponseDto {
  @ApiProperty({
    example: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
    description: 'The signing secret (Standard Webhooks format). Shown in this response only.',
  })
  secret: string;
}

export class PingResponseDto {
  @ApiProperty({ example: 'evt_0f8e2c1b7a6d4e3f9a8b7c6d5e4f3a2b', description: 'The webhook-id of the ping' })
  event_id: string;
  @ApiProperty({
    format: 'uuid',
    description: 'Its delivery (see the delivery log)',
    example: '7a1b2c3d-4e5f-4061-8a7b-9c0d1e2f3a4b',
  })
  delivery_id: string;
}

/** `POST /v1/webhooks/endpoints/{id}/recover`. */
export class RecoverWebhookEndpointDto {
  @ApiProperty({
    format: 'date-time',
    example: '2027-01-01T12:00:00Z',
    description:
      'RFC 3339. Every failed (given-up) delivery created at or after it is sent again. Not in the future, not ' +
      'older than the outbox keeps (WEBHOOKS_RETENTION_DAYS).',
  })
  @IsString()
  @IsNotEmpty()
  @IsRFC3339()
  since: string;
}

export class RecoverResponseDto {
  @ApiProperty({
    example: 3,
    description:
      'Deliveries re-queued (at most 10,000 per call: call again with the same since for the rest)',
  })
  requeued: number;
}
