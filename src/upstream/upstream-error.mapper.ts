import { AppError, type ErrorCode } from '../common/app-error';
import type { UpstreamError, UpstreamErrorCode } from './upstream.error';

const DEFAULTS: Record<UpstreamErrorCode, { code: ErrorCode; message: string }> = {
  UNAVAILABLE: {
    code: 'UPSTREAM_UNAVAILABLE',
    message: 'The ticketing upstream is unavailable; try again later',
  },
  TIMEOUT: {
    code: 'UPSTREAM_TIMEOUT',
    message: 'The ticketing upstream did not answer in time; the outcome is unknown',
  },
  RATE_LIMITED: {
    code: 'SERVICE_UNAVAILABLE',
    message: 'The ticketing upstream is busy; retry after the given delay',
  },
  // Our key's problem, not the caller's: say little (no key, no environment detail).
  UNAUTHORIZED: {
    code: 'UPSTREAM_UNAVAILABLE',
    message: 'The ticketing upstream is not reachable with the configured credentials',
  },
  FORBIDDEN: {
    code: 'UPSTREAM_UNAVAILABLE',
    message: 'The ticketing upstream refused this operation for the configured credentials',
  },
  BAD_RESPONSE: { code: 'UPSTREAM_UNAVAILABLE', message: 'The ticketing upstream sent an unexpected answer' },
  REJECTED: { code: 'BAD_REQUEST', message: 'The ticketing upstream rejected the request' },
  NOT_FOUND: { code: 'NOT_FOUND', message: 'Not found upstream' },
  CONFLICT: { code: 'CONFLICT', message: 'The ticketing upstream reported a conflict' },
};

/**
 * For an UpstreamError no feature caught (the global filter, wired in app.factory.ts): the upstream's 4xx
 * answered a request this service built, so without a feature to say what it means it is a dependency
 * failure (502), never the caller's 400/404/409.
 */
export const UNCAUGHT_UPSTREAM_OVERRIDES: Partial<
  Record<UpstreamErrorCode, { code: ErrorCode; message: string }>
> = {
  REJECTED: {
    code: 'UPSTREAM_UNAVAILABLE',
    message: 'The ticketing upstream refused a request of this service',
  },
  NOT_FOUND: {
    code: 'UPSTREAM_UNAVAILABLE',
    message: 'The ticketing upstream did not find what it was asked for',
  },
  CONFLICT: { code: 'UPSTREAM_UNAVAILABLE', message: 'The ticketing upstream reported a conflict' },
};

/** Rate-limited without a Retry-After: tell our caller to come back in a few seconds. */
export const DEFAULT_RETRY_AFTER_SECONDS = 5;

/**
 * Maps an UpstreamError to the service's AppError for feature modules (the global filter then picks the
 * HTTP status). Messages are fixed, safe texts: no upstream body, key or URL reaches our callers.
 * `overrides` lets a feature say what a code means in its context (e.g. NOT_FOUND → its own code).
 */
export function upstreamToAppError(
  error: UpstreamError,
  overrides: Partial<Record<UpstreamErrorCode, { code: ErrorCode; message: string }>> = {},
): AppError {
  const mapped = overrides[error.code] ?? DEFAULTS[error.code];
  const retryAfter =
    error.code === 'RATE_LIMITED'
      ? Math.max(1, error.retryAfterSeconds ?? DEFAULT_RETRY_AFTER_SECONDS)
      : undefined;
  return new AppError(
    mapped.code,
    mapped.message,
    { upstream: { operation: error.operation, code: error.code } },
    retryAfter,
  );
}

/** Tenant-safe texts of upstream failures, by code (sanitisedUpstreamMessage). */
const TENANT_TEXTS: Record<UpstreamErrorCode, string> = {
  UNAUTHORIZED: "The upstream refused this service's credentials",
  FORBIDDEN: 'The upstream refused the request',
  REJECTED: 'The upstream rejected the request',
  NOT_FOUND: 'The upstream did not find what it was asked for',
  CONFLICT: 'The upstream reported a conflict',
  RATE_LIMITED: 'The upstream is rate limiting this service',
  UNAVAILABLE: 'The upstream is unavailable',
  TIMEOUT: 'The upstream did not answer in time; the outcome is unknown',
  BAD_RESPONSE: 'The upstream sent an unexpected answer',
};

/**
 * What a tenant may read about an upstream failure (an order's `failure.reason` and audit steps, a ledger
 * transaction's `lastError`/`signError`, webhook event payloads, error bodies): a fixed text per code and the
 * HTTP status, e.g. "The upstream refused the request (403)". Never the upstream's body (it may echo anything,
 * another tenant's data included) nor this service's operator hints (key, environment): those stay in the logs,
 * where the caller writes the raw error next to the record's id.
 */
export function sanitisedUpstreamMessage(error: Pick<UpstreamError, 'code' | 'status'>): string {
  return `${TENANT_TEXTS[error.code]}${error.status === undefined ? '' : ` (${error.status})`}`;
}
