import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { Type } from 'class-transformer';
import {
  ArrayMaxSize,
  IsArray,
  IsOptional,
  IsString,
  Matches,
  MaxLength,
  MinLength,
  ValidateNested,
} from 'class-validator';

export class AdditionalSignatureDto {
  @ApiProperty({ example: 'Signer11111111111111111111111111111111111111' })
  @IsString()
  @Matches(/^[\x21-\x7e]{1,128}$/, { message: 'address must be 1 to 128 visible characters' })
  address: string;

  @ApiProperty({ example: '3yZe7dZ1…base58 signature' })
  @IsString()
  @Matches(/^[\x21-\x7e]{1,256}$/, { message: 'signature must be 1 to 256 visible characters' })
  signature: string;
}

/** Contract 2.5: the submission request, for a transaction signed through this service. */
export class SubmitTransactionDto {
  @ApiProperty({
    description: 'Base64 serialized transaction exactly as returned by a signing call',
    example: 'AQAAAA…base64',
  })
  @IsString()
  @MinLength(1)
  @MaxLength(65_536)
  @Matches(/^[A-Za-z0-9+/]+={0,2}$/, { message: 'signedTransaction must be Base64' })
  signedTransaction: string;

  @ApiPropertyOptional({ type: [AdditionalSignatureDto], default: [] })
  @IsOptional()
  @IsArray()
  @ArrayMaxSize(16)
  @ValidateNested({ each: true })
  @Type(() => AdditionalSignatureDto)
  additionalSignatures?: AdditionalSignatureDto[];
}
