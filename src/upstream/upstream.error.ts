export const UPSTREAM_ERROR_CODES = [
  'UNAUTHORIZED',
  'FORBIDDEN',
  'REJECTED',
  'NOT_FOUND',
  'CONFLICT',
  'RATE_LIMITED',
  'UNAVAILABLE',
  'TIMEOUT',
  'BAD_RESPONSE',
] as const;
export type UpstreamErrorCode = (typeof UPSTREAM_ERROR_CODES)[number];

/** The client's public operations; used in errors, log lines and metric labels (bounded set). */
export type UpstreamOperation =
  | 'listUpcomingEvents'
  | 'listActiveListings'
  | 'signUserTransaction'
  | 'signIntegratorTransaction'
  | 'submitTransaction'
  | 'getPurchaseStatus'
  | 'getProtocolConfig'
  | 'verifyKey';

export interface UpstreamErrorInit {
  code: UpstreamErrorCode;
  operation: UpstreamOperation;
  message: string;
  /** HTTP status of the last attempt, when one answered. */
  status?: number;
  /** Attempts made (0 when the request was refused before sending). */
  attempts: number;
  /** How long the upstream (or our limiter) asked us to wait, in ms. */
  retryAfterMs?: number;
  /**
   * For signing and submission: an attempt may have executed upstream (timeout, connection lost, 5xx), so
   * the caller must resolve the outcome (same idempotency key / same signed bytes / purchase status).
   */
  outcomeUnknown?: boolean;
  /** Short, sanitised excerpt of the response body (never the key, never a signed transaction). */
  excerpt?: string;
}

/**
 * The one error the upstream client throws. `code` is decided from the HTTP status first (contract part 7:
 * no common error body), then from transport failures; the body only contributes a sanitised excerpt.
 * No request config, header or cause is attached, so logging this error can never leak the API key.
 */
export class UpstreamError extends Error {
  readonly code: UpstreamErrorCode;
  readonly operation: UpstreamOperation;
  readonly status?: number;
  readonly attempts: number;
  readonly retryAfterMs?: number;
  readonly outcomeUnknown: boolean;
  readonly excerpt?: string;

  constructor(init: UpstreamErrorInit) {
    super(`upstream ${init.operation}: ${init.message}`);
    this.name = 'UpstreamError';
    this.code = init.code;
    this.operation = init.operation;
    this.status = init.status;
    this.attempts = init.attempts;
    this.retryAfterMs = init.retryAfterMs;
    this.outcomeUnknown = init.outcomeUnknown ?? false;
    this.excerpt = init.excerpt;
  }

  /** Seconds for a Retry-After header, rounded up. */
  get retryAfterSeconds(): number | undefined {
    return this.retryAfterMs === undefined ? undefined : Math.ceil(this.retryAfterMs / 1000);
  }

  withAttempts(attempts: number, outcomeUnknown: boolean): UpstreamError {
    return new UpstreamError({
      ...this.init(),
      attempts,
      outcomeUnknown: this.outcomeUnknown || outcomeUnknown,
    });
  }

  private init(): UpstreamErrorInit {
    return {
      code: this.code,
      operation: this.operation,
      message: this.message.slice(`upstream ${this.operation}: `.length),
      status: this.status,
      attempts: this.attempts,
      retryAfterMs: this.retryAfterMs,
      outcomeUnknown: this.outcomeUnknown,
      excerpt: this.excerpt,
    };
  }
}

/** Error code for a non-200 HTTP status (contract part 7: the status decides, not the body). */
export function codeForHttpStatus(status: number): UpstreamErrorCode {
  if (status === 401) return 'UNAUTHORIZED';
  if (status === 403) return 'FORBIDDEN';
  if (status === 404) return 'NOT_FOUND';
  if (status === 409) return 'CONFLICT';
  if (status === 429) return 'RATE_LIMITED';
  if (status >= 400 && status < 500) return 'REJECTED';
  if (status >= 500 && status < 600) return 'UNAVAILABLE';
  // 1xx/2xx other than 200 and 3xx (redirects are not followed): not a documented answer.
  return 'BAD_RESPONSE';
}

const URL_PATTERN = /\bhttps?:\/\/\S+/gi;
// Long base64/base64url/hex runs: serialized transactions, signatures, tokens. Never echoed.
const OPAQUE_RUN = /[A-Za-z0-9+/_=-]{40,}/g;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]+/g;

/**
 * A short, single-line excerpt of a response body that is safe to log and to put in an error: secrets are
 * cut out, URLs (private claim URLs) and long opaque runs (signed transactions) are replaced.
 */
export function safeExcerpt(body: string, secrets: readonly string[], maxLength = 160): string | undefined {
  if (body.length === 0) return undefined;
  let text = body;
  for (const secret of secrets) if (secret.length > 0) text = text.split(secret).join('[REDACTED]');
  // Replace over the whole body before cutting, so a cut cannot leave a short tail of an opaque run.
  text = text.replace(URL_PATTERN, '[url]').replace(OPAQUE_RUN, '[opaque]').replace(CONTROL, ' ').trim();
  if (text.length > maxLength) text = `${text.slice(0, maxLength)}…`;
  return text.length > 0 ? text : undefined;
}
