import type { HttpService } from '@nestjs/axios';
import {
  ConsecutiveBreaker,
  TaskCancelledError,
  bulkhead,
  circuitBreaker,
  handleType,
  type BulkheadPolicy,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import { safeRequestId } from '../common/request-id';
import { fullJitterDelay } from './backoff';
import { AdaptiveRateLimiter, RateLimitWaitTooLong } from './rate-limiter';
import { AttemptClassifier, AttemptFailure, TIMEOUT_REASON, type AttemptOutcome } from './upstream.attempt';
import { UpstreamError, type UpstreamOperation } from './upstream.error';
import type { UpstreamLogger } from './upstream.logger';
import type { AttemptStatus, UpstreamMetrics } from './upstream.metrics';
import type { ResolvedUpstreamOptions } from './upstream.options';
import { UpstreamTransport } from './upstream.transport';

/** read: idempotent lookups. sign: idempotent by the caller's key. submit: idempotent by the signed bytes. */
export type CallKind = 'read' | 'sign' | 'submit';

export interface HttpCall {
  operation: UpstreamOperation;
  kind: CallKind;
  method: 'GET' | 'POST';
  /** Path template for logs (`/wallets/users/{subject}/signatures`): never the concrete path. */
  route: string;
  /** Encoded path and query, relative to the base URL. */
  path: string;
  body?: string;
  headers?: Record<string, string>;
  requestId?: string;
  signal?: AbortSignal;
  maxAttempts?: number;
  deadlineMs?: number;
}

export interface HttpResult {
  body: string;
  attempts: number;
  requestId: string;
}

const MIN_ATTEMPT_MS = 10;

/** A promise that rejects when `signal` aborts (the race that ends an attempt even while it is queued). */
function abortPromise(signal: AbortSignal): { promise: Promise<never>; dispose: () => void } {
  // Node 20 has no Promise.withResolvers.
  let reject: ((reason: unknown) => void) | undefined;
  const promise = new Promise<never>((_resolve, rejectPromise) => {
    reject = rejectPromise;
  });
  const onAbort = (): void => reject?.(new TaskCancelledError());
  if (signal.aborted) onAbort();
  else signal.addEventListener('abort', onAbort, { once: true });
  promise.catch(() => undefined);
  return { promise, dispose: () => signal.removeEventListener('abort', onAbort) };
}

/**
 * HTTP execution with the contract's policies (part 7), one instance per UpstreamClient (a singleton, so
 * limiter, breaker and bulkhead are process-wide). Per call: adaptive rate limiter → bulkhead (concurrency
 * cap) → circuit breaker → one axios request over a keep-alive agent, with a per-attempt timeout and an
 * overall deadline; retries are decided here so the exact rules (and virtual time in tests) are explicit.
 */
export class UpstreamHttp {
  readonly transport: UpstreamTransport;
  private readonly breaker: CircuitBreakerPolicy;
  private readonly bulkhead: BulkheadPolicy;
  readonly limiter: AdaptiveRateLimiter;
  private readonly classifier: AttemptClassifier;
  /** Time of the last 401: readiness reports a key/environment problem from then on until a check passes. */
  lastUnauthorizedAt: number | undefined;

  constructor(
    private readonly options: ResolvedUpstreamOptions,
    private readonly logger: UpstreamLogger,
    private readonly metrics: UpstreamMetrics,
    httpService?: HttpService,
  ) {
    const { concurrency } = options;
    this.classifier = new AttemptClassifier(options);
    this.transport = new UpstreamTransport(options, httpService);
    this.breaker = circuitBreaker(handleType(AttemptFailure), {
      halfOpenAfter: options.breaker.halfOpenAfterMs,
      breaker: new ConsecutiveBreaker(options.breaker.consecutiveFailures),
    });
    this.breaker.onStateChange((state) => {
      metrics.circuitState.set(state);
      logger.warn(
        { upstream: { circuit: ['closed', 'open', 'half-open', 'isolated'][state] } },
        'upstream circuit state',
      );
    });
    metrics.circuitState.set(0);
    this.bulkhead = bulkhead(concurrency.maxInFlight, concurrency.maxQueued);
    this.limiter = new AdaptiveRateLimiter(
      {
        maxRatePerSecond: options.rateLimit.ratePerSecond,
        minRatePerSecond: options.rateLimit.minRatePerSecond,
        recoveryIntervalMs: options.rateLimit.recoveryIntervalMs,
        recoveryStep: options.rateLimit.recoveryStep,
      },
      options.clock,
      (rate) => metrics.rateLimit.set(rate),
    );
    metrics.rateLimit.set(options.rateLimit.ratePerSecond);
  }

  /** Closes pooled sockets (module destroy, CLI exit, tests). */
  close(): void {
    this.transport.close();
  }

  /** Runs a call to completion: a 200 body, or an UpstreamError carrying the attempts made. */
  async execute(call: HttpCall): Promise<HttpResult> {
    const { clock, retry } = this.options;
    const requestId = safeRequestId(call.requestId);
    const deadline = clock.now() + (call.deadlineMs ?? this.options.timeouts.deadlineMs);
    const maxAttempts = call.maxAttempts ?? retry.maxAttempts;
    let unknown = false;
    let last: UpstreamError | undefined;
    let made = 0;
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      if (attempt > 1 && deadline - clock.now() < MIN_ATTEMPT_MS) break;
      try {
        await this.limiter.acquire(deadline, call.signal);
      } catch (error) {
        if (error instanceof RateLimitWaitTooLong) {
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
        throw this.cancelled(call, attempt - 1, unknown);
      }
      const outcome = await this.attempt(call, attempt, deadline, requestId);
      made = attempt;
      if (outcome.answer !== undefined && outcome.error === undefined) {
        return { body: outcome.answer.body, attempts: attempt, requestId };
      }
      const error = outcome.error as UpstreamError;
      last = error;
      if (outcome.mayHaveExecuted && call.kind !== 'read') unknown = true;
      if (error.code === 'UNAUTHORIZED') this.lastUnauthorizedAt = clock.now();
      if (error.code === 'RATE_LIMITED') {
        this.metrics.rateLimited.inc({ operation: call.operation });
        this.limiter.onRateLimited(
          error.retryAfterMs === undefined ? undefined : Math.min(error.retryAfterMs, retry.retryAfterCapMs),
        );
      }
      if (!outcome.retryable || attempt >= maxAttempts || call.signal?.aborted === true) {
        throw error.withAttempts(attempt, unknown);
      }
      let delay = fullJitterDelay(attempt, retry.baseDelayMs, retry.maxDelayMs, this.options.random);
      if (error.code === 'RATE_LIMITED' && error.retryAfterMs !== undefined) {
        // Honour Retry-After: never come back earlier. Longer than the cap: give the wait to the caller.
        if (error.retryAfterMs > retry.retryAfterCapMs) throw error.withAttempts(attempt, unknown);
        delay = error.retryAfterMs;
      }
      if (clock.now() + delay + MIN_ATTEMPT_MS > deadline) throw error.withAttempts(attempt, unknown);
      this.metrics.retries.inc({ operation: call.operation, reason: error.code });
      try {
        await clock.sleep(delay, call.signal);
      } catch {
        throw this.cancelled(call, attempt, unknown);
      }
    }
    throw (last ?? this.timeoutError(call, 0, unknown)).withAttempts(made, unknown);
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

  private timeoutError(call: HttpCall, attempts: number, unknown: boolean): UpstreamError {
    return new UpstreamError({
      code: 'TIMEOUT',
      operation: call.operation,
      message: 'deadline reached before an attempt could be made',
      attempts,
      outcomeUnknown: unknown,
    });
  }

  private timeoutFor(kind: CallKind): number {
    const t = this.options.timeouts;
    return kind === 'read' ? t.readMs : kind === 'sign' ? t.signMs : t.submitMs;
  }

  /** One attempt: bulkhead → breaker → request, bounded by min(attempt timeout, deadline). */
  private async attempt(
    call: HttpCall,
    attempt: number,
    deadline: number,
    requestId: string,
  ): Promise<AttemptOutcome> {
    const controller = new AbortController();
    const timeoutMs = Math.max(1, Math.min(this.timeoutFor(call.kind), deadline - this.options.clock.now()));
    const timer = setTimeout(() => controller.abort(TIMEOUT_REASON), timeoutMs);
    const onCallerAbort = (): void => controller.abort('cancelled');
    call.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const aborted = abortPromise(controller.signal);
    const sent = { value: false };
    const startedAt = performance.now();
    let outcome: AttemptOutcome;
    let statusLabel: AttemptStatus;
    try {
      const work = this.bulkhead.execute(
        () => this.breaker.execute(() => this.transport.send(call, requestId, controller.signal, sent)),
        controller.signal,
      );
      // The race ends the attempt at its timeout even while queued; the loser must not go unhandled.
      work.catch(() => undefined);
      const answer = await Promise.race([work, aborted.promise]);
      statusLabel = `${answer.status}`;
      outcome = this.classifier.classify(call, answer);
    } catch (error) {
      ({ outcome, statusLabel } = this.classifier.failure(
        call,
        error,
        controller.signal,
        sent.value,
        timeoutMs,
      ));
    } finally {
      clearTimeout(timer);
      aborted.dispose();
      call.signal?.removeEventListener('abort', onCallerAbort);
    }
    const seconds = (performance.now() - startedAt) / 1000;
    this.metrics.attempt(call.operation, statusLabel, seconds);
    const fields = {
      operation: call.operation,
      method: call.method,
      route: call.route,
      attempt,
      status: statusLabel,
      durationMs: Math.round(seconds * 100_000) / 100,
      requestId,
      ...(outcome.error ? { code: outcome.error.code, retryable: outcome.retryable } : {}),
    };
    if (outcome.error) this.logger.warn({ upstream: fields }, 'upstream attempt failed');
    else this.logger.info({ upstream: fields }, 'upstream attempt');
    return outcome;
  }
}
