import type { AppError } from './app-error';
import { validationFailed } from './validation';

/** An Idempotency-Key header value: 1..255 visible ASCII characters, inner spaces allowed (HTTP-safe). */
export const IDEMPOTENCY_KEY_PATTERN = /^[\x21-\x7e](?:[\x20-\x7e]{0,253}[\x21-\x7e])?$/;

/** The one 400 for a missing or malformed Idempotency-Key header, naming the header. */
export function badIdempotencyKey(): AppError {
  return validationFailed([
    {
      field: 'Idempotency-Key',
      problems: ['header is required: 1 to 255 visible ASCII characters (inner spaces allowed)'],
    },
  ]);
}

/** Returns the key when it is a valid Idempotency-Key header value; otherwise throws the 400. */
export function requireIdempotencyKey(key: string | undefined): string {
  if (key === undefined || !IDEMPOTENCY_KEY_PATTERN.test(key)) throw badIdempotencyKey();
  return key;
}
