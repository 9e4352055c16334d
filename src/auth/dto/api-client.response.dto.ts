import { ApiProperty } from '@nestjs/swagger';
import type { ApiClientView } from '../api-clients.service';
import { SCOPES, type Scope } from '../scopes';
import type { SubjectBinding } from '../subject-binding';
import { ANY_SUBJECT_RESPONSE_PROPERTY, BINDING_RESPONSE_PROPERTY } from './subject-binding.dto';

/** A client as listed to its issuing admin: never the key, never its hash. */
export class ApiClientResponseDto {
  @ApiProperty({ format: 'uuid', example: '0b7e5c1a-3f2d-4c8e-9a6b-1d2e3f4a5b6c' })
  id: string;

  @ApiProperty({ example: 'marketplace-backend' })
  name: string;

  @ApiProperty({
    description: 'Public lookup id of the key (first characters); not a secret',
    example: 'trb_live_4fT9aQ2LmZ',
  })
  keyPrefix: string;

  @ApiProperty({ enum: SCOPES, isArray: true, example: ['catalog:read', 'orders:write'] })
  scopes: Scope[];

  @BINDING_RESPONSE_PROPERTY
  binding: SubjectBinding | null;

  @ANY_SUBJECT_RESPONSE_PROPERTY
  anySubject: boolean;

  @ApiProperty({
    format: 'uuid',
    nullable: true,
    type: String,
    description: 'Admin client that issued it',
    example: '5d1c2b3a-4e5f-4a6b-8c7d-9e0f1a2b3c4d',
  })
  createdBy: string | null;

  @ApiProperty({ format: 'date-time', example: '2027-01-01T12:00:00.000Z' })
  createdAt: string;

  @ApiProperty({ format: 'date-time', nullable: true, type: String, example: null })
  revokedAt: string | null;

  @ApiProperty({
    format: 'date-time',
    nullable: true,
    type: String,
    description: 'Updated at most once a minute',
    example: '2027-01-01T12:00:00.000Z',
  })
  lastUsedAt: string | null;

  static from(view: ApiClientView): ApiClientResponseDto {
    return {
      id: view.id,
      name: view.name,
      keyPrefix: view.keyPrefix,
      scopes: view.scopes,
      binding: view.binding,
      anySubject: view.anySubject,
      createdBy: view.createdBy,
      createdAt: view.createdAt.toISOString(),
      revokedAt: view.revokedAt?.toISOString() ?? null,
      lastUsedAt: view.lastUsedAt?.toISOString() ?? null,
    };
  }
}

export class CreatedApiClientResponseDto extends ApiClientResponseDto {
  @ApiProperty({
    description: 'The API key. Shown in this response only; it cannot be retrieved again.',
    example: 'trb_live_4fT9aQ2LmZ…_0aB3cD',
  })
  key: string;
}

export class ApiClientPageDto {
  @ApiProperty({ type: [ApiClientResponseDto] })
  items: ApiClientResponseDto[];

  @ApiProperty({
    nullable: true,
    type: String,
    description:
      'Opaque, signed: pass as `cursor` for the next page (same caller); null at the end. ' +
      'camelCase here for compatibility; newer lists use `next_cursor`',
    example: null,
  })
  nextCursor: string | null;
}
