import { AppError } from '../common/app-error';
import { badIdempotencyKey } from '../common/idempotency-key';
import { UpstreamError } from '../upstream/upstream.error';
import type { StoredSignError } from './ledger-transaction.entity';

export const TransactionErrors = {
  badIdempotencyKey,
  keyReused: (): AppError =>
    new AppError(
      'IDEMPOTENCY_KEY_REUSED',
      'This Idempotency-Key was already used with a different request body',
    ),
  inFlight: (retryAfterSeconds: number): AppError =>
    new AppError(
      'CONFLICT',
      'A request with this Idempotency-Key is still in flight; retry after Retry-After seconds',
      undefined,
      retryAfterSeconds,
    ),
  notFound: (): AppError => new AppError('NOT_FOUND', 'Transaction not found'),
  notSigned: (): AppError =>
    new AppError('CONFLICT', 'The transaction is not signed (yet); retry the signing request first'),
  /** A submission the upstream refused (4xx, recorded as `lastError`): these bytes will never land. */
  // Only the code and status of `lastError` ("FORBIDDEN 403: …"): rows written before issue 31 kept the
  // upstream's body after them.
  submissionRefused: (lastError: string | null): AppError =>
    new AppError(
      'UPSTREAM_REJECTED',
      `The upstream refused the submission (${(lastError ?? 'REJECTED').split(':')[0]})`,
    ),
  // Rebuilt from the stored code and status, not the stored message: rows written before issue 31 kept the
  // upstream's body in it.
  replayedRejection: (stored: StoredSignError): AppError =>
    new AppError('UPSTREAM_REJECTED', signingRefusedMessage(stored.status, stored.code), {
      upstreamStatus: stored.status,
      replayed: true,
    }),
};

/**
 * A definite refusal by the upstream (a 4xx that is not about our credentials or rate): the request did not
 * execute and repeating it unchanged will not help. Anything else (timeout, 5xx, network, 429, 401) leaves
 * the outcome unknown or transient: retry with the same key / bytes.
 */
export function isDefiniteRejection(error: UpstreamError): boolean {
  return (
    !error.outcomeUnknown &&
    (error.code === 'REJECTED' ||
      error.code === 'FORBIDDEN' ||
      error.code === 'CONFLICT' ||
      error.code === 'NOT_FOUND')
  );
}

/** The tenant-visible text of a refused signing: the status (or code), never the upstream's body. */
function signingRefusedMessage(status: number | null, code: string): string {
  return `The upstream refused the signing request (${status ?? code})`;
}

export function storedSignError(error: UpstreamError): StoredSignError {
  return {
    code: error.code,
    status: error.status ?? null,
    // Tenant-visible (stored, replayed, an order's failure reason): never the upstream's body (logged instead).
    message: signingRefusedMessage(error.status ?? null, error.code),
  };
}

/** How a failed upstream call reaches our caller (the body never carries a key or signed bytes). */
export function upstreamFailure(error: unknown, what: 'signing' | 'submission'): AppError {
  if (!(error instanceof UpstreamError)) return new AppError('INTERNAL', 'Internal server error');
  if (isDefiniteRejection(error)) {
    const stored = storedSignError(error);
    return new AppError('UPSTREAM_REJECTED', stored.message, { upstreamStatus: stored.status });
  }
  const retry =
    what === 'signing'
      ? 'the outcome is unknown; retry with the same Idempotency-Key (the same transaction is returned)'
      : 'the outcome is unknown; the transaction is tracked in the background';
  if (error.code === 'TIMEOUT')
    return new AppError('UPSTREAM_TIMEOUT', `The upstream ${what} timed out: ${retry}`);
  return new AppError(
    'UPSTREAM_UNAVAILABLE',
    `The upstream ${what} failed (${error.code}): ${retry}`,
    undefined,
    error.retryAfterSeconds,
  );
}
