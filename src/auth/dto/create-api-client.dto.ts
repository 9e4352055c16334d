import { ApiProperty } from '@nestjs/swagger';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsIn,
  IsString,
  Matches,
  MaxLength,
  MinLength,
} from 'class-validator';
import { CLIENT_NAME_MAX_LENGTH, CLIENT_NAME_PATTERN } from '../api-clients.service';
import { SCOPES, type Scope } from '../scopes';

export class CreateApiClientDto {
  @ApiProperty({ minLength: 1, maxLength: CLIENT_NAME_MAX_LENGTH, example: 'marketplace-backend' })
  @IsString()
  @MinLength(1)
  @MaxLength(CLIENT_NAME_MAX_LENGTH)
  @Matches(CLIENT_NAME_PATTERN, { message: 'name must not contain control characters' })
  @Matches(/^\S(.*\S)?$/su, { message: 'name must not start or end with whitespace' })
  name: string;

  @ApiProperty({
    enum: SCOPES,
    isArray: true,
    minItems: 1,
    maxItems: SCOPES.length,
    example: ['catalog:read'],
  })
  @IsArray()
  @ArrayMinSize(1)
  @ArrayMaxSize(SCOPES.length)
  @ArrayUnique()
  @IsIn(SCOPES, { each: true })
  scopes: Scope[];
}
