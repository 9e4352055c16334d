import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  ArrayMinSize,
  ArrayUnique,
  IsArray,
  IsBoolean,
  IsIn,
  IsObject,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';
import { CLIENT_NAME_MAX_LENGTH, CLIENT_NAME_PATTERN } from '../api-clients.service';
import { SCOPES, type Scope } from '../scopes';
import { SubjectBindingInputDto } from './subject-binding.dto';

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

  @ApiPropertyOptional({
    type: SubjectBindingInputDto,
    nullable: true,
    description:
      'Bind the key to subjects: routes that act for a user or integrator subject refuse any other with 403 ' +
      'SUBJECT_NOT_ALLOWED. Not allowed on an admin key. A non-admin key with listings:write, orders:write or ' +
      'transactions:write needs a binding or `anySubject: true`.',
  })
  @IsOptional()
  @IsObject()
  @ValidateNested()
  @Type(() => SubjectBindingInputDto)
  binding?: SubjectBindingInputDto | null;

  @ApiPropertyOptional({
    type: Boolean,
    description:
      'The explicit opt-in to an unbound key: it may act for any subject (needed for a non-admin key with ' +
      'listings:write, orders:write or transactions:write and no binding; exclusive with `binding`).',
    example: false,
  })
  @IsOptional()
  @IsBoolean()
  anySubject?: boolean;
}
