import { randomUUID } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import axios, { type AxiosInstance } from 'axios';
import {
  BrokenCircuitError,
  BulkheadRejectedError,
  ConsecutiveBreaker,
  TaskCancelledError,
  bulkhead,
  circuitBreaker,
  handleType,
  type BulkheadPolicy,
  type CircuitBreakerPolicy,
} from 'cockatiel';
import { fullJitterDelay } from './backoff';
import { AdaptiveRateLimiter, RateLimitWaitTooLong } from './rate-limiter';
import { parseRetryAfter } from './retry-after';
import {
  TRANSIENT_STATUSES,
  UpstreamError,
  codeForHttpStatus,
  safeExcerpt,
  type UpstreamErrorCode,
  type UpstreamOperation,
} from './upstream.error';
import type { UpstreamLogger } from './upstream.logger';
import type { AttemptStatus, UpstreamMetrics } from './upstream.metrics';
import type { ResolvedUpstreamOptions } from './upstream.options';

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

/** An attempt that failed in a way the breaker counts: transient 5xx, network error, timeout. */
class AttemptFailure extends Error {
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
class AttemptAborted extends Error {
  constructor(
    readonly statusLabel: AttemptStatus,
    readonly code: UpstreamErrorCode,
    readonly detail: string,
  ) {
    super(detail);
  }
}

interface Answer {
  status: number;
  body: string;
  retryAfter?: string;
}

interface AttemptOutcome {
  answer?: Answer;
  error?: UpstreamError;
  retryable: boolean;
  /** The request may have reached the upstream and run there (write outcome unknown). */
  mayHaveExecuted: boolean;
}

const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;
const MIN_ATTEMPT_MS = 10;
const TIMEOUT_REASON = 'upstream-attempt-timeout';

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
  readonly agent: http.Agent | https.Agent;
  private readonly axios: AxiosInstance;
  private readonly breaker: CircuitBreakerPolicy;
  private readonly bulkhead: BulkheadPolicy;
  readonly limiter: AdaptiveRateLimiter;
  /** Time of the last 401: readiness reports a key/environment problem from then on until a check passes. */
  lastUnauthorizedAt: number | undefined;

  constructor(
    private readonly options: ResolvedUpstreamOptions,
    private readonly logger: UpstreamLogger,
    private readonly metrics: UpstreamMetrics,
  ) {
    const { concurrency } = options;
    const agentOptions = {
      keepAlive: true,
      keepAliveMsecs: 1_000,
      maxSockets: concurrency.maxInFlight,
      maxFreeSockets: concurrency.maxInFlight,
      // Idle keep-alive sockets are closed after 4 s, before common server idle timeouts (5 s), so a
      // request rarely lands on a socket the server is closing.
      timeout: 4_000,
      scheduling: 'lifo' as const,
    };
    this.agent = options.baseUrl.startsWith('https:')
      ? new https.Agent(agentOptions)
      : new http.Agent(agentOptions);
    this.axios = axios.create({
      baseURL: options.baseUrl,
      httpAgent: this.agent,
      httpsAgent: this.agent,
      proxy: false,
      maxRedirects: 0,
      responseType: 'text',
      transformRequest: [(data: unknown) => data],
      transformResponse: [(data: unknown) => data],
      validateStatus: () => true,
      maxContentLength: options.maxResponseBytes,
      maxBodyLength: options.maxResponseBytes,
    });
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
    this.agent.destroy();
  }

  /** Runs a call to completion: a 200 body, or an UpstreamError carrying the attempts made. */
  async execute(call: HttpCall): Promise<HttpResult> {
    const { clock, retry } = this.options;
    const requestId =
      call.requestId !== undefined && SAFE_REQUEST_ID.test(call.requestId) ? call.requestId : randomUUID();
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
        () => this.breaker.execute(() => this.send(call, requestId, controller.signal, sent)),
        controller.signal,
      );
      // The race ends the attempt at its timeout even while queued; the loser must not go unhandled.
      work.catch(() => undefined);
      const answer = await Promise.race([work, aborted.promise]);
      statusLabel = `${answer.status}`;
      outcome = this.classify(call, answer);
    } catch (error) {
      ({ outcome, statusLabel } = this.failure(call, error, controller.signal, sent.value, timeoutMs));
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

  private async send(
    call: HttpCall,
    requestId: string,
    signal: AbortSignal,
    sent: { value: boolean },
  ): Promise<Answer> {
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': 'ticket-resale-bff',
      'x-api-key': this.options.apiKey,
      'x-request-id': requestId,
      ...call.headers,
    };
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    try {
      sent.value = true;
      const response = await this.axios.request<string>({
        method: call.method,
        url: call.path,
        data: call.body,
        headers,
        signal,
      });
      const body = typeof response.data === 'string' ? response.data : '';
      const retryAfter = response.headers['retry-after'] as unknown;
      const answer: Answer = {
        status: response.status,
        body,
        ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
      };
      if (TRANSIENT_STATUSES.has(answer.status)) {
        throw new AttemptFailure(
          `${answer.status}`,
          'UNAVAILABLE',
          `HTTP ${answer.status}`,
          answer.status,
          body,
        );
      }
      return answer;
    } catch (error) {
      if (error instanceof AttemptFailure) throw error;
      if (signal.aborted) {
        if (signal.reason === TIMEOUT_REASON)
          throw new AttemptFailure('timeout', 'TIMEOUT', 'attempt timed out');
        throw new AttemptAborted('cancelled', 'TIMEOUT', 'cancelled by the caller');
      }
      // Only the error's code is kept: axios errors carry the request config, headers (the key) included.
      const code = axios.isAxiosError(error) && typeof error.code === 'string' ? error.code : 'EUNKNOWN';
      if (code === 'ERR_BAD_RESPONSE' || code === 'ERR_FR_MAX_CONTENT_LENGTH_EXCEEDED') {
        throw new AttemptAborted('network', 'BAD_RESPONSE', 'response body too large or unreadable');
      }
      throw new AttemptFailure(
        'network',
        'UNAVAILABLE',
        `connection failed (${code.replace(/[^A-Z0-9_]/g, '')})`,
      );
    }
  }

  private classify(call: HttpCall, answer: Answer): AttemptOutcome {
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
    return { answer, error, retryable: code === 'RATE_LIMITED', mayHaveExecuted: false };
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

  private failure(
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
