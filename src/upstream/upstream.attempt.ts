import { BrokenCircuitError, BulkheadRejectedError, TaskCancelledError } from 'cockatiel';
import { parseRetryAfter } from './retry-after';
import { UpstreamError, codeForHttpStatus, safeExcerpt, type UpstreamErrorCode } from './upstream.error';
import type { HttpCall } from './upstream.http';
import type { AttemptStatus } from './upstream.metrics';
import type { ResolvedUpstreamOptions } from './upstream.options';

/** The abort reason of an attempt's own timer (anything else aborting it is the caller). */
export const TIMEOUT_REASON = 'upstream-attempt-timeout';

/** An attempt that failed in a way the breaker counts: transient 5xx, network error, timeout. */
export class AttemptFailure extends Error {
  constructor(
    readonly statusLabel: AttemptStatus,
    readonly code: UpstreamErrorCode,
    readonly detail: string,
    readonly httpStatus?: number,
    readonly body?: string,
  ) {
    super(detail);
  }
}

/** Caller cancellation or a response we refuse (too large): not an upstream health signal. */
export class AttemptAborted extends Error {
  constructor(
    readonly statusLabel: AttemptStatus,
    readonly code: UpstreamErrorCode,
    readonly detail: string,
  ) {
    super(detail);
  }
}

export interface Answer {
  status: number;
  body: string;
  retryAfter?: string;
}

export interface AttemptOutcome {
  answer?: Answer;
  error?: UpstreamError;
  retryable: boolean;
  /** The request may have reached the upstream and run there (write outcome unknown). */
  mayHaveExecuted: boolean;
}

/**
 * Turns how one attempt ended into an AttemptOutcome: the UpstreamError (code from the HTTP status first,
 * contract part 7), whether the retry loop may try again, and whether a write may have run upstream.
 */
export class AttemptClassifier {
  constructor(private readonly options: ResolvedUpstreamOptions) {}

  /** A status line answered: 200 is the answer; any other status becomes the error its status decides. */
  classify(call: HttpCall, answer: Answer): AttemptOutcome {
    if (answer.status === 200) return { answer, retryable: false, mayHaveExecuted: true };
    const code = codeForHttpStatus(answer.status);
    const retryAfterMs = answer.status === 429 ? parseRetryAfter(answer.retryAfter, Date.now()) : undefined;
    const error = new UpstreamError({
      code,
      operation: call.operation,
      message: this.messageFor(call, answer.status, code),
      status: answer.status,
      attempts: 0,
      retryAfterMs,
      excerpt: safeExcerpt(answer.body, [this.options.apiKey]),
    });
    // 401/403/other 4xx are never retried (contract part 7); a 429 is, after Retry-After or a backoff.
    // Only a 4xx proves a write was refused; a 2xx other than 200, a 3xx or a 5xx may follow its execution.
    const refused = answer.status >= 400 && answer.status < 500;
    return { answer, error, retryable: code === 'RATE_LIMITED', mayHaveExecuted: !refused };
  }

  private messageFor(call: HttpCall, status: number, code: UpstreamErrorCode): string {
    switch (code) {
      case 'UNAUTHORIZED':
        return `401: the upstream rejected the API key; fix UPSTREAM_API_KEY or UPSTREAM_ENVIRONMENT (${this.options.environment}); not retried`;
      case 'FORBIDDEN':
        return `403: the API key lacks the permission for ${call.operation}, or its operation-specific authorization failed; not retried`;
      case 'RATE_LIMITED':
        return '429: rate limited by the upstream';
      case 'NOT_FOUND':
        return '404: not found';
      case 'CONFLICT':
        return '409: conflict';
      case 'REJECTED':
        return `${status}: the upstream rejected the request; not retried`;
      case 'UNAVAILABLE':
        return `${status}: upstream error`;
      case 'BAD_RESPONSE':
        return `unexpected HTTP status ${status}`;
      case 'TIMEOUT':
        return 'timed out';
    }
    return `HTTP ${status}`;
  }

  /** An attempt that ended without an answer we keep: timeout, network, breaker, bulkhead, cancellation. */
  failure(
    call: HttpCall,
    error: unknown,
    signal: AbortSignal,
    sent: boolean,
    timeoutMs: number,
  ): { outcome: AttemptOutcome; statusLabel: AttemptStatus } {
    const make = (
      statusLabel: AttemptStatus,
      code: UpstreamErrorCode,
      message: string,
      retryable: boolean,
      mayHaveExecuted: boolean,
      status?: number,
      body?: string,
    ): { outcome: AttemptOutcome; statusLabel: AttemptStatus } => ({
      statusLabel,
      outcome: {
        retryable,
        mayHaveExecuted,
        error: new UpstreamError({
          code,
          operation: call.operation,
          message,
          status,
          attempts: 0,
          outcomeUnknown: mayHaveExecuted && call.kind !== 'read',
          excerpt: body === undefined ? undefined : safeExcerpt(body, [this.options.apiKey]),
        }),
      },
    });
    if (error instanceof AttemptFailure) {
      if (error.code === 'TIMEOUT') {
        return make('timeout', 'TIMEOUT', `no answer within ${timeoutMs} ms; outcome unknown`, true, sent);
      }
      return make(error.statusLabel, error.code, error.detail, true, sent, error.httpStatus, error.body);
    }
    if (error instanceof AttemptAborted) {
      return make(error.statusLabel, error.code, error.detail, false, sent && error.code === 'TIMEOUT');
    }
    if (error instanceof BrokenCircuitError) {
      return make(
        'circuit_open',
        'UNAVAILABLE',
        `circuit open after ${this.options.breaker.consecutiveFailures} consecutive upstream failures; failing fast`,
        false,
        false,
      );
    }
    if (error instanceof BulkheadRejectedError) {
      return make(
        'overloaded',
        'UNAVAILABLE',
        'too many upstream calls in flight and queued; failing fast',
        false,
        false,
      );
    }
    if (error instanceof TaskCancelledError || signal.aborted) {
      // Aborted before or while waiting for a slot, or the race saw the abort first.
      if (signal.reason === TIMEOUT_REASON) {
        return make('timeout', 'TIMEOUT', `no answer within ${timeoutMs} ms; outcome unknown`, true, sent);
      }
      return make('cancelled', 'TIMEOUT', 'cancelled by the caller; outcome unknown', false, sent);
    }
    return make('network', 'UNAVAILABLE', 'unexpected client failure', false, sent);
  }
}
