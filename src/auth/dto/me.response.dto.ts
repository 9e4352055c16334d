import { ApiProperty } from '@nestjs/swagger';
import { SCOPES, type Scope } from '../scopes';
import type { SubjectBinding } from '../subject-binding';
import { BINDING_RESPONSE_PROPERTY } from './subject-binding.dto';

export class MeResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'marketplace-backend' })
  name: string;

  @ApiProperty({ enum: SCOPES, isArray: true, example: ['catalog:read', 'orders:write'] })
  scopes: Scope[];

  @BINDING_RESPONSE_PROPERTY
  binding: SubjectBinding | null;
}
