/**
 * Stable error codes of the service's own API. Services throw AppError with one of these; the global
 * filter is the only place that knows HTTP (see ERROR_HTTP_STATUS).
 */
export const ERROR_HTTP_STATUS = {
  VALIDATION_FAILED: 400,
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  /** A key bound to subjects named another one (details: `{ field }`; docs/SECURITY.md, subject bindings). */
  SUBJECT_NOT_ALLOWED: 403,
  NOT_FOUND: 404,
  GONE: 410,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  BUYER_EVENT_LIMIT: 409,
  IDEMPOTENCY_KEY_REUSED: 422,
  UPSTREAM_REJECTED: 422,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_MEDIA_TYPE: 415,
  EXPECTATION_FAILED: 417,
  RATE_LIMITED: 429,
  BUYER_OPEN_ORDERS_LIMIT: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  UPSTREAM_UNAVAILABLE: 502,
  SERVICE_UNAVAILABLE: 503,
  /** The database is overloaded (no connection in time, too many connections, statement timeout): retry. */
  DATABASE_BUSY: 503,
  UPSTREAM_TIMEOUT: 504,
} as const;

export type ErrorCode = keyof typeof ERROR_HTTP_STATUS;

export interface FieldProblem {
  /** Dotted path of the offending field, e.g. `items.0.price`. */
  field: string;
  problems: string[];
}

export class AppError extends Error {
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: unknown,
    /** Seconds, sent as `Retry-After` (429/503). */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }

  get httpStatus(): number {
    return ERROR_HTTP_STATUS[this.code];
  }
}

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  409: 'CONFLICT',
  410: 'GONE',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  417: 'EXPECTATION_FAILED',
  422: 'VALIDATION_FAILED',
  429: 'RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
  502: 'UPSTREAM_UNAVAILABLE',
  503: 'SERVICE_UNAVAILABLE',
  504: 'UPSTREAM_TIMEOUT',
};

/** Best code for a bare HTTP status (framework errors that carry no code of ours). */
export function codeForStatus(status: number): ErrorCode {
  return CODE_BY_STATUS[status] ?? (status >= 500 ? 'INTERNAL' : 'BAD_REQUEST');
}
