// One piece: one attempt of an upstream call and the transport it goes through (the HttpService, its keep-alive
// agent and httpServiceTransport), kept together with the types they share (HttpCall, Answer, Transport,
// TransportError). To split later: the transport functions into a file of their own, once upstream.client.ts
// (edited by another helper this session) can change its import.
import http from 'node:http';
import https from 'node:https';
import { HttpService } from '@nestjs/axios';
import { Inject, Injectable } from '@nestjs/common';
import axios, { type AxiosInstance, type AxiosRequestConfig } from 'axios';
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
import { UpstreamError, codeForHttpStatus, safeExcerpt, type UpstreamOperation } from '../upstream.error';
import type { ResolvedUpstreamOptions } from '../upstream.options';
import { UPSTREAM_OPTIONS, UPSTREAM_TRANSPORT } from '../upstream.tokens';
import { UpstreamMetrics, type AttemptStatus } from './metrics';
import { nodeHttpAdapter, type WireHookConfig } from './node-adapter';
import type { WireGrant } from './rate-limiter';
import { parseRetryAfter } from './retry-after';

/** read: idempotent lookups. sign: idempotent by the caller's key. submit: idempotent by the signed bytes. */
export type CallKind = 'read' | 'sign' | 'submit';

/** One call as the retry loop runs it: already encoded, sent as is on every attempt. */
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
  /** `performance.now()` after which no attempt starts (UpstreamCallOptions.notAfter). */
  notAfter?: number;
  maxAttempts?: number;
  deadlineMs?: number;
}

/** A status line and body the upstream sent. */
export interface Answer {
  status: number;
  body: string;
  retryAfter?: string;
}

/**
 * The wire: sends one request and resolves with whatever status came back. Rejects with TransportError
 * when no answer could be read; an abort of `signal` may reject with anything (the attempt judges it).
 * `onWritten`, when the transport can tell, is called once the request has been handed to the socket.
 */
export interface Transport {
  send(call: HttpCall, requestId: string, signal: AbortSignal, onWritten?: () => void): Promise<Answer>;
}

/** No answer: the connection failed (`unreadable` false) or the body was refused (too large, unreadable). */
export class TransportError extends Error {
  constructor(
    readonly unreadable: boolean,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'TransportError';
  }
}

/**
 * How an attempt ended; the retry loop (retry-loop.ts) decides from this alone whether to try again.
 * `status`: any HTTP status but 200 and the transient 5xx (the code follows the status).
 */
export type Ending =
  | 'answer'
  | 'status'
  | 'transient'
  | 'network'
  | 'timeout'
  | 'cancelled'
  | 'circuit_open'
  | 'overloaded'
  | 'unreadable'
  | 'unexpected';

export interface AttemptOutcome {
  ending: Ending;
  /** The 200 body (ending `answer`). */
  body?: string;
  /** Set unless the ending is `answer`. */
  error?: UpstreamError;
  /** Retry-After of a 429, in ms (delay-seconds or HTTP-date). */
  retryAfterMs?: number;
  /** The request may have reached the upstream and run there (a write's outcome is then unknown). */
  mayHaveExecuted: boolean;
  /** Metric and log label: the HTTP status, or how the attempt ended without one. */
  label: AttemptStatus;
  seconds: number;
}

type Classified = Omit<AttemptOutcome, 'label' | 'seconds'>;

/** Transient 5xx: the breaker counts them and the loop retries them. Other 5xx will not change on a retry. */
const TRANSIENT_STATUSES: ReadonlySet<number> = new Set([500, 502, 503, 504]);
/** The abort reason of an attempt's own timer (anything else aborting it is the caller). */
const TIMEOUT_REASON = 'upstream-attempt-timeout';
/** Largest accepted response body. */
const MAX_RESPONSE_BYTES = 16 * 1024 * 1024;

/**
 * The @nestjs/axios HttpService the upstream client sends through: one axios instance over one keep-alive
 * agent. Bodies are text in and out (parsed later without precision loss), every status is returned (the
 * status decides, not axios), redirects are not followed and no proxy from the environment is used. The
 * adapter is our own lean one over node:http(s) (node-adapter.ts): axios's stock http adapter cost the
 * listings walk ~0.3-0.7 ms per page and kept each page's buffers alive to the next scavenge.
 */
export function createUpstreamHttpService(options: ResolvedUpstreamOptions): HttpService {
  const { maxInFlight } = options.concurrency;
  const agentOptions = {
    keepAlive: true,
    keepAliveMsecs: 1_000,
    maxSockets: maxInFlight,
    maxFreeSockets: maxInFlight,
    // Idle keep-alive sockets are closed after 4 s, before common server idle timeouts (5 s), so a
    // request rarely lands on a socket the server is closing.
    timeout: 4_000,
    scheduling: 'lifo' as const,
  };
  const agent = options.baseUrl.startsWith('https:')
    ? new https.Agent(agentOptions)
    : new http.Agent(agentOptions);
  const instance = axios.create({
    adapter: nodeHttpAdapter,
    baseURL: options.baseUrl,
    httpAgent: agent,
    httpsAgent: agent,
    proxy: false,
    maxRedirects: 0,
    responseType: 'text',
    transformRequest: [(data: unknown) => data],
    transformResponse: [(data: unknown) => data],
    validateStatus: () => true,
    maxContentLength: MAX_RESPONSE_BYTES,
    maxBodyLength: MAX_RESPONSE_BYTES,
  });
  // @nestjs/axios is ESM and sees axios's ESM typings; this CommonJS build sees the CJS ones. Same
  // runtime shape, two declarations: bridge them here, once.
  return new HttpService(instance as unknown as ConstructorParameters<typeof HttpService>[0]);
}

/** The keep-alive agent under an HttpService made by createUpstreamHttpService. */
export function agentOf(httpService: HttpService): http.Agent {
  const defaults = (httpService.axiosRef as unknown as AxiosInstance).defaults;
  return (defaults.httpAgent ?? defaults.httpsAgent) as http.Agent;
}

/** The only Transport of production: one request through @nestjs/axios's HttpService. */
export function httpServiceTransport(httpService: HttpService, apiKey: string): Transport {
  const instance = httpService.axiosRef as unknown as AxiosInstance;
  return {
    async send(call, requestId, signal, onWritten) {
      const headers: Record<string, string> = {
        accept: 'application/json',
        'user-agent': 'ticket-resale-bff',
        'x-api-key': apiKey,
        'x-request-id': requestId,
        ...call.headers,
      };
      if (call.body !== undefined) headers['content-type'] = 'application/json';
      try {
        const config: AxiosRequestConfig & WireHookConfig = {
          method: call.method,
          url: call.path,
          data: call.body,
          headers,
          signal,
          onWritten,
        };
        const response = await instance.request<string>(config);
        const retryAfter = response.headers['retry-after'] as unknown;
        return {
          status: response.status,
          body: typeof response.data === 'string' ? response.data : '',
          ...(typeof retryAfter === 'string' ? { retryAfter } : {}),
        };
      } catch (error) {
        if (signal.aborted) throw error;
        // Only the error's code is kept: axios errors carry the request config, headers (the key) included.
        const code = axios.isAxiosError(error) && typeof error.code === 'string' ? error.code : 'EUNKNOWN';
        if (code === 'ERR_BAD_RESPONSE' || code === 'ERR_FR_MAX_CONTENT_LENGTH_EXCEEDED') {
          throw new TransportError(true, 'response body too large or unreadable');
        }
        throw new TransportError(false, `connection failed (${code.replace(/[^A-Z0-9_]/g, '')})`);
      }
    },
  };
}

/** The caller's `notAfter` passed while the attempt waited for room: it was not sent. */
class PastNotAfter extends Error {
  constructor() {
    super("not sent: the caller's lease deadline passed before the attempt could leave");
  }
}

/** Thrown inside the breaker for what it counts: transient 5xx, network error, our own timeout. */
class CountedFailure extends Error {
  constructor(readonly answer?: Answer) {
    super('upstream attempt failed');
  }
}

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
 * One attempt, send and classify: bulkhead (concurrency cap) → circuit breaker → Transport, bounded by
 * min(per-operation timeout, time left before the deadline); then how it ended (code from the HTTP status
 * first, contract part 7) and whether a write may have run upstream. Whether to try again is the retry
 * loop's call (retry-loop.ts). One instance per client, so breaker and bulkhead are process-wide.
 */
@Injectable()
export class UpstreamAttempt {
  private readonly breaker: CircuitBreakerPolicy;
  private readonly bulkhead: BulkheadPolicy;

  constructor(
    @Inject(UPSTREAM_OPTIONS) private readonly options: ResolvedUpstreamOptions,
    @Inject(UPSTREAM_TRANSPORT) private readonly transport: Transport,
    metrics: UpstreamMetrics,
  ) {
    const { logger } = options;
    this.breaker = circuitBreaker(handleType(CountedFailure), {
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
    this.bulkhead = bulkhead(options.concurrency.maxInFlight, options.concurrency.maxQueued);
  }

  /**
   * `grant` is the rate limiter's place for this attempt (rate-limiter.ts): told `written` when the transport has
   * handed the request to the socket, and settled when the attempt ends — written then if it was given to the
   * transport (it may have left: counting it late is safe), handed back if it never was.
   */
  async run(
    call: HttpCall,
    deadline: number,
    requestId: string,
    grant?: Pick<WireGrant, 'written' | 'unsent'>,
  ): Promise<AttemptOutcome> {
    const t = this.options.timeouts;
    const limit = call.kind === 'read' ? t.readMs : call.kind === 'sign' ? t.signMs : t.submitMs;
    const timeoutMs = Math.max(1, Math.min(limit, deadline - this.options.clock.now()));
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(TIMEOUT_REASON), timeoutMs);
    const onCallerAbort = (): void => controller.abort('cancelled');
    call.signal?.addEventListener('abort', onCallerAbort, { once: true });
    const aborted = abortPromise(controller.signal);
    let sent = false;
    const startedAt = performance.now();
    let outcome: Classified;
    let label: AttemptStatus;
    try {
      const work = this.bulkhead.execute(
        () =>
          this.breaker.execute(async () => {
            // Queued behind other calls (bulkhead): the caller's lease may have run out meanwhile.
            if (call.notAfter !== undefined && performance.now() >= call.notAfter) throw new PastNotAfter();
            sent = true;
            let answer: Answer;
            try {
              answer = await this.transport.send(call, requestId, controller.signal, grant?.written);
            } catch (error) {
              if (error instanceof TransportError && error.unreadable) throw error;
              if (controller.signal.aborted && controller.signal.reason !== TIMEOUT_REASON) throw error;
              throw new CountedFailure();
            }
            if (TRANSIENT_STATUSES.has(answer.status)) throw new CountedFailure(answer);
            return answer;
          }),
        controller.signal,
      );
      // The race ends the attempt at its timeout even while queued; the loser must not go unhandled.
      work.catch(() => undefined);
      const answer = await Promise.race([work, aborted.promise]);
      label = `${answer.status}`;
      outcome = this.answered(call, answer, 'status');
    } catch (error) {
      ({ outcome, label } = this.failed(call, error, controller.signal, sent, timeoutMs));
    } finally {
      clearTimeout(timer);
      aborted.dispose();
      call.signal?.removeEventListener('abort', onCallerAbort);
      if (sent) grant?.written();
      else grant?.unsent();
    }
    return { ...outcome, label, seconds: (performance.now() - startedAt) / 1000 };
  }

  /** A status line answered: 200 is the answer; any other status becomes the error its status decides. */
  private answered(call: HttpCall, answer: Answer, ending: 'status' | 'transient'): Classified {
    if (answer.status === 200) return { ending: 'answer', body: answer.body, mayHaveExecuted: true };
    const code = codeForHttpStatus(answer.status);
    // HTTP-dates are wall-clock time, whatever clock the retries run on.
    const retryAfterMs = answer.status === 429 ? parseRetryAfter(answer.retryAfter, Date.now()) : undefined;
    // Only a 4xx proves a write was refused; a 2xx other than 200, a 3xx or a 5xx may follow its execution.
    const mayHaveExecuted = !(answer.status >= 400 && answer.status < 500);
    const error = new UpstreamError({
      code,
      operation: call.operation,
      message: this.messageFor(call, answer.status),
      status: answer.status,
      attempts: 0,
      retryAfterMs,
      outcomeUnknown: mayHaveExecuted && call.kind !== 'read',
      excerpt: safeExcerpt(answer.body, [this.options.apiKey]),
    });
    return { ending, error, retryAfterMs, mayHaveExecuted };
  }

  private messageFor(call: HttpCall, status: number): string {
    switch (codeForHttpStatus(status)) {
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
        return TRANSIENT_STATUSES.has(status) ? `HTTP ${status}` : `${status}: upstream error`;
      case 'BAD_RESPONSE':
      case 'TIMEOUT':
        break;
    }
    return `unexpected HTTP status ${status}`;
  }

  /** Ended without an answer we keep: transient 5xx, timeout, network, breaker, bulkhead, cancellation. */
  private failed(
    call: HttpCall,
    error: unknown,
    signal: AbortSignal,
    sent: boolean,
    timeoutMs: number,
  ): { outcome: Classified; label: AttemptStatus } {
    const make = (
      ending: Ending,
      label: AttemptStatus,
      code: 'UNAVAILABLE' | 'TIMEOUT' | 'BAD_RESPONSE',
      message: string,
      mayHaveExecuted: boolean,
    ): { outcome: Classified; label: AttemptStatus } => ({
      label,
      outcome: {
        ending,
        mayHaveExecuted,
        error: new UpstreamError({
          code,
          operation: call.operation,
          message,
          attempts: 0,
          outcomeUnknown: mayHaveExecuted && call.kind !== 'read',
        }),
      },
    });
    if (error instanceof CountedFailure && error.answer !== undefined) {
      return { label: `${error.answer.status}`, outcome: this.answered(call, error.answer, 'transient') };
    }
    if (signal.aborted && signal.reason === TIMEOUT_REASON) {
      return make('timeout', 'timeout', 'TIMEOUT', `no answer within ${timeoutMs} ms; outcome unknown`, sent);
    }
    if (error instanceof CountedFailure) {
      return make('network', 'network', 'UNAVAILABLE', 'connection failed', sent);
    }
    if (error instanceof PastNotAfter) {
      return make('cancelled', 'cancelled', 'TIMEOUT', error.message, false);
    }
    if (error instanceof TransportError) {
      return make('unreadable', 'network', 'BAD_RESPONSE', error.detail, false);
    }
    if (error instanceof BrokenCircuitError) {
      const n = this.options.breaker.consecutiveFailures;
      const message = `circuit open after ${n} consecutive upstream failures; failing fast`;
      return make('circuit_open', 'circuit_open', 'UNAVAILABLE', message, false);
    }
    if (error instanceof BulkheadRejectedError) {
      const message = 'too many upstream calls in flight and queued; failing fast';
      return make('overloaded', 'overloaded', 'UNAVAILABLE', message, false);
    }
    if (error instanceof TaskCancelledError || signal.aborted) {
      return make('cancelled', 'cancelled', 'TIMEOUT', 'cancelled by the caller; outcome unknown', sent);
    }
    return make('unexpected', 'network', 'UNAVAILABLE', 'unexpected client failure', sent);
  }
}
