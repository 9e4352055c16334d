import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { ArrayMaxSize, ArrayUnique, IsArray, IsOptional, IsString, Matches } from 'class-validator';
import {
  BINDING_MAX_PATTERNS,
  SUBJECT_PATTERN,
  SUBJECT_PATTERN_MESSAGE,
  type SubjectBinding,
} from '../subject-binding';

const PATTERNS_DESCRIPTION =
  'Exact subjects, or a prefix followed by one trailing `*` (`acme-*`); `*` alone: every subject of this ' +
  'wallet kind. Omitted or empty: none.';

function Patterns(): PropertyDecorator {
  const decorators = [
    ApiPropertyOptional({
      type: [String],
      maxItems: BINDING_MAX_PATTERNS,
      description: PATTERNS_DESCRIPTION,
      example: ['acme-*'],
    }),
    IsOptional(),
    IsArray(),
    ArrayMaxSize(BINDING_MAX_PATTERNS),
    ArrayUnique(),
    IsString({ each: true }),
    Matches(SUBJECT_PATTERN, { each: true, message: (a) => `${a.property}: ${SUBJECT_PATTERN_MESSAGE}` }),
  ];
  return (target, key) => {
    for (const decorate of decorators) decorate(target, key);
  };
}

/** `binding` of `POST /v1/admin/api-clients`: the subjects the new key may act for. */
export class SubjectBindingInputDto {
  @Patterns()
  userSubjects?: string[];

  @Patterns()
  integratorSubjects?: string[];

  static toBinding(dto: SubjectBindingInputDto): SubjectBinding {
    return { userSubjects: dto.userSubjects ?? [], integratorSubjects: dto.integratorSubjects ?? [] };
  }
}

/** A key's binding as shown: the user and the integrator subject patterns it may act for. */
export class SubjectBindingDto {
  @ApiProperty({
    type: [String],
    description: 'User subjects (custodial user wallets) the key may act for',
    example: ['acme-*'],
  })
  userSubjects: string[];

  @ApiProperty({
    type: [String],
    description: 'Integrator subjects (integrator wallets) the key may sign as',
    example: [],
  })
  integratorSubjects: string[];
}

export const BINDING_RESPONSE_PROPERTY = ApiProperty({
  type: SubjectBindingDto,
  nullable: true,
  description:
    'The subjects the key may act for (docs/SECURITY.md, subject bindings); null: unbound, any subject',
});

export const ANY_SUBJECT_RESPONSE_PROPERTY = ApiProperty({
  description:
    'True when the key may act for any subject: unbound (issued with `anySubject: true`, an admin key, or ' +
    'issued before bindings were required); false when bound',
  example: false,
});
