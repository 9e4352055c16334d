import { ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { AppError, type FieldProblem } from './app-error';

/** Flattens class-validator's tree into one entry per offending field, with dotted paths. */
export function flattenValidationErrors(errors: ValidationError[], parent = ''): FieldProblem[] {
  const out: FieldProblem[] = [];
  for (const error of errors) {
    const field = parent ? `${parent}.${error.property}` : error.property;
    if (error.constraints) out.push({ field, problems: Object.values(error.constraints) });
    if (error.children?.length) out.push(...flattenValidationErrors(error.children, field));
  }
  return out;
}

export function validationFailed(problems: FieldProblem[]): AppError {
  const fields = problems.map((p) => p.field).join(', ');
  return new AppError('VALIDATION_FAILED', `Invalid request: ${fields}`, problems);
}

/**
 * A `bigint` parameter (`@Param('id', new ParseU64Pipe('id')) id: bigint`) is parsed by its own pipe,
 * which runs after this global one: there is no DTO to validate, and trying would reject every value.
 */
class AppValidationPipe extends ValidationPipe {
  protected override toValidate(metadata: ArgumentMetadata): boolean {
    return (metadata.metatype as unknown) !== BigInt && super.toValidate(metadata);
  }
}

/** Strict DTO validation: unknown fields are rejected, not silently dropped. */
export function createValidationPipe(): ValidationPipe {
  return new AppValidationPipe({
    whitelist: true,
    forbidNonWhitelisted: true,
    forbidUnknownValues: true,
    transform: true,
    stopAtFirstError: false,
    // Values are never echoed back: a rejected field might hold a secret.
    validationError: { target: false, value: false },
    exceptionFactory: (errors) => validationFailed(flattenValidationErrors(errors)),
  });
}
