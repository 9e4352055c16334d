import { Inject, Injectable } from '@nestjs/common';
import type { Span } from '@opentelemetry/api';
import { safeRequestId } from '../../common/request-id';
import { withSpan } from '../../tracing/tracing';
import { UpstreamError } from '../upstream.error';
import type { ResolvedUpstreamOptions } from '../upstream.options';
import { UPSTREAM_OPTIONS } from '../upstream.tokens';
import { UpstreamAttempt, type AttemptOutcome, type Ending, type HttpCall } from './attempt';
import { fullJitterDelay } from './backoff';
import type { UpstreamLogger } from './logger';
import { UpstreamMetrics } from './metrics';
import { AdaptiveRateLimiter, RateLimitWaitTooLong, type WireGrant } from './rate-limiter';

export interface HttpResult {
  body: string;
  attempts: number;
}

/** An attempt is not started with less time than this left before the deadline. */
export const MIN_ATTEMPT_MS = 10;

/**
 * What is retried: transient 5xx (500/502/503/504), connection failures, attempt timeouts (reads and
 * writes alike: signing keeps its idempotency key, submission its bytes) and 429. Never: 200, any other
 * status (401/403/404/409/other 4xx, 501/505…, 2xx/3xx), an open circuit, a full queue, a body we refuse,
 * the caller's cancellation.
 */
const RETRIED: ReadonlySet<Ending> = new Set(['transient', 'network', 'timeout']);

/**
 * Whether an attempt starting `inMs` from now would start within `MIN_ATTEMPT_MS` of the caller's `notAfter`, or
 * after it. Real monotonic time (`performance.now()`), like the lease stamps it is derived from.
 */
function pastNotAfter(call: Pick<HttpCall, 'notAfter'>, inMs: number): boolean {
  return call.notAfter !== undefined && performance.now() + inMs + MIN_ATTEMPT_MS > call.notAfter;
}

export function isRetried(outcome: Pick<AttemptOutcome, 'ending' | 'error'>): boolean {
  return RETRIED.has(outcome.ending) || outcome.error?.code === 'RATE_LIMITED';
}

/**
 * The one retry loop (contract part 7), per call: rate limiter → attempt → retry or not. How often: up to
 * `maxAttempts` attempts within the call's deadline; between attempts a full-jitter backoff, or exactly the
 * 429's Retry-After (never earlier; longer than `retryAfterCapMs` ends the call with RATE_LIMITED and the
 * wait for the caller); a retry that could not start before the deadline is not made. Every 429 also lowers
 * the process-wide rate (and, told to the limiter's listeners, every other replica's: replicas/). One instance
 * per client: limiter and `lastUnauthorizedAt` are process-wide.
 */
@Injectable()
export class RetryLoop {
  readonly limiter: AdaptiveRateLimiter;
  /** Time of the last 401: readiness reports a key/environment problem from then on until a check passes. */
  lastUnauthorizedAt: number | undefined;

  private readonly logger: UpstreamLogger;

  constructor(
    @Inject(UPSTREAM_OPTIONS) private readonly options: ResolvedUpstreamOptions,
    @Inject(UpstreamAttempt) private readonly attempt: Pick<UpstreamAttempt, 'run'>,
    private readonly metrics: UpstreamMetrics,
  ) {
    this.logger = options.logger;
    const { rateLimit } = options;
    this.limiter = new AdaptiveRateLimiter(
      { maxRatePerSecond: rateLimit.ratePerSecond, minRatePerSecond: rateLimit.minRatePerSecond },
      options.clock,
      (rate) => metrics.rateLimit.set(rate),
    );
    metrics.rateLimit.set(rateLimit.ratePerSecond);
  }

  /**
   * Runs a call to completion: a 200 body, or an UpstreamError carrying the attempts made. Traced as one span
   * `upstream <operation>` (route template, never the concrete path), each attempt an event on it; the HTTP
   * client span of each attempt is its child and carries the traceparent upstream (docs/tracing.md).
   */
  execute(call: HttpCall): Promise<HttpResult> {
    const attributes = {
      'upstream.operation': call.operation,
      'upstream.kind': call.kind,
      'http.request.method': call.method,
      'http.route': call.route,
    };
    return withSpan(`upstream ${call.operation}`, attributes, async (span) => {
      try {
        const result = await this.run(call, span);
        span?.setAttribute('upstream.attempts', result.attempts);
        return result;
      } catch (error) {
        if (span && error instanceof UpstreamError) {
          span.setAttributes({
            'upstream.attempts': error.attempts,
            'upstream.error_code': error.code,
            'upstream.outcome_unknown': error.outcomeUnknown,
          });
        }
        throw error;
      }
    });
  }

  private async run(call: HttpCall, span: Span | undefined): Promise<HttpResult> {
    const { clock, retry } = this.options;
    const requestId = safeRequestId(call.requestId);
    const deadline = clock.now() + (call.deadlineMs ?? this.options.timeouts.deadlineMs);
    const maxAttempts = call.maxAttempts ?? retry.maxAttempts;
    let unknown = false;
    let last: UpstreamError | undefined;
    let made = 0;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (attempt > 1 && deadline - clock.now() < MIN_ATTEMPT_MS) break;
      if (pastNotAfter(call, 0)) throw this.notSent(call, attempt - 1, unknown);
      let grant: WireGrant;
      try {
        grant = await this.limiter.acquire(deadline, call.signal);
      } catch (error) {
        if (!(error instanceof RateLimitWaitTooLong)) throw this.cancelled(call, attempt - 1, unknown);
        throw new UpstreamError({
          code: 'RATE_LIMITED',
          operation: call.operation,
          message: 'local rate limit (lowered after upstream 429s) leaves no time before the deadline',
          attempts: attempt - 1,
          retryAfterMs: error.waitMs,
          outcomeUnknown: unknown,
          status: last?.status,
        });
      }
      // The wait for the rate may have outlasted the caller's lease: the grant goes back unused.
      if (pastNotAfter(call, 0)) {
        grant.unsent();
        throw this.notSent(call, attempt - 1, unknown);
      }
      const outcome = await this.attempt.run(call, deadline, requestId, grant);
      // UpstreamAttempt has settled the grant (written or handed back); an attempt that did not counts as written.
      grant.written();
      made = attempt;
      const retried = isRetried(outcome);
      this.observe(call, attempt, requestId, outcome, retried, span);
      if (outcome.error === undefined) return { body: outcome.body ?? '', attempts: attempt };
      const error = outcome.error;
      last = error;
      if (outcome.mayHaveExecuted && call.kind !== 'read') unknown = true;
      if (error.code === 'UNAUTHORIZED') this.lastUnauthorizedAt = clock.now();
      const retryAfterMs = outcome.retryAfterMs;
      if (error.code === 'RATE_LIMITED') {
        this.metrics.rateLimited.inc({ operation: call.operation });
        this.limiter.onRateLimited(
          retryAfterMs === undefined ? undefined : Math.min(retryAfterMs, retry.retryAfterCapMs),
        );
      }
      if (!retried || attempt >= maxAttempts || call.signal?.aborted === true) {
        throw error.withAttempts(attempt, unknown);
      }
      let delay = fullJitterDelay(attempt, retry.baseDelayMs, retry.maxDelayMs, this.options.random);
      if (retryAfterMs !== undefined) {
        // Honour Retry-After: never come back earlier. Longer than the cap: give the wait to the caller.
        if (retryAfterMs > retry.retryAfterCapMs) throw error.withAttempts(attempt, unknown);
        delay = retryAfterMs;
      }
      if (clock.now() + delay + MIN_ATTEMPT_MS > deadline) throw error.withAttempts(attempt, unknown);
      // A retry that would start after the caller's lease deadline is not made (the next holder retries).
      if (pastNotAfter(call, delay)) throw error.withAttempts(attempt, unknown);
      this.metrics.retries.inc({ operation: call.operation, reason: error.code });
      try {
        await clock.sleep(delay, call.signal);
      } catch {
        throw this.cancelled(call, attempt, unknown);
      }
    }
    throw (
      last ??
      new UpstreamError({
        code: 'TIMEOUT',
        operation: call.operation,
        message: 'deadline reached before an attempt could be made',
        attempts: 0,
      })
    ).withAttempts(made, unknown);
  }

  /** An attempt refused by the caller's `notAfter`: nothing was sent by it (TIMEOUT, never a rejection). */
  private notSent(call: HttpCall, attempts: number, unknown: boolean): UpstreamError {
    this.logger.warn(
      { upstream: { operation: call.operation, route: call.route, attempts } },
      "upstream attempt not sent: the caller's lease deadline comes first",
    );
    return new UpstreamError({
      code: 'TIMEOUT',
      operation: call.operation,
      message: "not sent: the caller's lease deadline (notAfter) comes before the attempt could start",
      attempts,
      outcomeUnknown: unknown,
    });
  }

  private cancelled(call: HttpCall, attempts: number, unknown: boolean): UpstreamError {
    return new UpstreamError({
      code: 'TIMEOUT',
      operation: call.operation,
      message: 'cancelled by the caller; outcome unknown',
      attempts,
      outcomeUnknown: unknown || call.kind !== 'read',
    });
  }

  /** One log line and the metrics of an attempt; never the key, the concrete path or a body. */
  private observe(
    call: HttpCall,
    attempt: number,
    requestId: string,
    outcome: AttemptOutcome,
    retried: boolean,
    span: Span | undefined,
  ): void {
    this.metrics.attempt(call.operation, outcome.label, outcome.seconds);
    span?.addEvent('upstream.attempt', {
      attempt,
      status: outcome.label,
      duration_ms: Math.round(outcome.seconds * 100_000) / 100,
      ...(outcome.error ? { code: outcome.error.code, retried } : {}),
    });
    const fields = {
      operation: call.operation,
      method: call.method,
      route: call.route,
      attempt,
      status: outcome.label,
      durationMs: Math.round(outcome.seconds * 100_000) / 100,
      requestId,
      ...(outcome.error ? { code: outcome.error.code, retryable: retried } : {}),
    };
    if (outcome.error) this.logger.warn({ upstream: fields }, 'upstream attempt failed');
    else this.logger.info({ upstream: fields }, 'upstream attempt');
  }
}
