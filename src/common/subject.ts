import { applyDecorators } from '@nestjs/common';
import { ValidateBy } from 'class-validator';

/**
 * A user or integrator subject as this service accepts it anywhere (orders, selling, transactions, key
 * bindings): 1..128 of `A-Z a-z 0-9 . _ : @ -`, and not `.`/`..` nor containing `..`. Subjects are sent to the
 * upstream inside URL paths (`/claim_wallets/users/{subject}/…`): with no `/`, `%` or dot segments, no upstream
 * or proxy that decodes or normalises a path before routing can be steered to another wallet (`alice/../bob`
 * passed an `alice*` binding and was sent as `alice%2F..%2Fbob`).
 */
export const SUBJECT_CHARSET = /^[A-Za-z0-9._:@-]{1,128}$/;
export const SUBJECT_MAX_LENGTH = 128;

export function isSafeSubject(value: unknown): value is string {
  return typeof value === 'string' && SUBJECT_CHARSET.test(value) && value !== '.' && !value.includes('..');
}

export const subjectMessage = (field: string): string =>
  `${field} must be 1 to ${SUBJECT_MAX_LENGTH} characters of A-Z a-z 0-9 . _ : @ - (no "..")`;

/**
 * class-validator decorator for a subject field (400 VALIDATION_FAILED naming it). The OpenAPI property states
 * `pattern: SUBJECT_CHARSET.source` beside it.
 */
export function IsSubject(): PropertyDecorator {
  return applyDecorators(
    ValidateBy({
      name: 'isSafeSubject',
      validator: {
        validate: (value: unknown) => isSafeSubject(value),
        defaultMessage: (a) => subjectMessage(a?.property ?? 'subject'),
      },
    }),
  );
}
