import { ApiProperty } from '@nestjs/swagger';
import { SCOPES, type Scope } from '../scopes';
import type { SubjectBinding } from '../subject-binding';
import { ANY_SUBJECT_RESPONSE_PROPERTY, BINDING_RESPONSE_PROPERTY } from './subject-binding.dto';

export class MeResponseDto {
  @ApiProperty({ format: 'uuid', example: '0b7e5c1a-3f2d-4c8e-9a6b-1d2e3f4a5b6c' })
  id: string;

  @ApiProperty({ example: 'marketplace-backend' })
  name: string;

  @ApiProperty({ enum: SCOPES, isArray: true, example: ['catalog:read', 'orders:write'] })
  scopes: Scope[];

  @BINDING_RESPONSE_PROPERTY
  binding: SubjectBinding | null;

  @ANY_SUBJECT_RESPONSE_PROPERTY
  anySubject: boolean;
}
