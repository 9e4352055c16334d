import { ApiProperty } from '@nestjs/swagger';
import { SCOPES, type Scope } from '../scopes';

export class MeResponseDto {
  @ApiProperty({ format: 'uuid' })
  id: string;

  @ApiProperty({ example: 'marketplace-backend' })
  name: string;

  @ApiProperty({ enum: SCOPES, isArray: true, example: ['catalog:read', 'orders:write'] })
  scopes: Scope[];
}
