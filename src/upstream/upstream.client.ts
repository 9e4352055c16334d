import { Inject, Injectable, Optional, type OnModuleDestroy } from '@nestjs/common';
import { MetricsService } from '../metrics/metrics.service';
import { encodeU64 } from './int.codec';
import { JsonParseError, parseJsonSafely } from './safe-json';
import { UpstreamError, safeExcerpt, type UpstreamOperation } from './upstream.error';
import { UpstreamHttp, type CallKind } from './upstream.http';
import { nestUpstreamLogger } from './upstream.logger';
import { UpstreamMetrics } from './upstream.metrics';
import {
  resolveUpstreamOptions,
  type ResolvedUpstreamOptions,
  type UpstreamOptions,
} from './upstream.options';
import { DEFAULT_MAX_PAGES, walkPages } from './upstream.pagination';
import {
  RequestShapeError,
  assertIdempotencyKey,
  assertSubject,
  encodeInstructionBatch,
  encodeSubmission,
} from './upstream.requests';
import {
  ResponseShapeError,
  parseEventsPage,
  parseListingsPage,
  parseProtocolConfig,
  parsePurchaseStatus,
  parseSignedTransaction,
  parseSubmissionResult,
} from './upstream.responses';
import type {
  ActiveListing,
  InstructionBatch,
  KeyVerdict,
  ListActiveListingsInput,
  ListUpcomingEventsInput,
  Page,
  ProtocolConfig,
  PurchaseStatus,
  SignedTransaction,
  SubmissionResult,
  SubmitTransactionInput,
  UpcomingEvent,
  UpstreamCallOptions,
  WalkListingsOptions,
  WalkOptions,
  WalkPage,
} from './upstream.types';

export const UPSTREAM_OPTIONS = Symbol('UPSTREAM_OPTIONS');

const count = (group: NodeJS.ReadOnlyDict<unknown[]>): number =>
  Object.values(group).reduce((sum, list) => sum + (list?.length ?? 0), 0);

const EVENTS_PATH = '/indexer/events/upcoming';

interface Request<T> {
  operation: UpstreamOperation;
  kind: CallKind;
  method: 'GET' | 'POST';
  route: string;
  path: string;
  body?: string;
  headers?: Record<string, string>;
  parse: (json: unknown) => T;
  /** Signing and submission responses carry signed bytes: no excerpt of them, ever. */
  sensitiveBody?: boolean;
  /** The status alone is the answer (key check): the body is not read. */
  ignoreBody?: boolean;
  maxAttempts?: number;
  deadlineMs?: number;
}

function query(params: Record<string, string | number | undefined>): string {
  const parts = Object.entries(params)
    .filter(([, v]) => v !== undefined)
    // Encoded exactly once; '+' and ' ' become %2B and %20, so an opaque cursor arrives byte-exact.
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(String(v))}`);
  return parts.length === 0 ? '' : `?${parts.join('&')}`;
}

function pageLimit(limit: number | undefined, fallback: number): number {
  const value = limit ?? fallback;
  if (!Number.isSafeInteger(value) || value < 1)
    throw new RequestShapeError('limit must be a positive integer');
  return value;
}

/**
 * The only code that talks to the upstream Ticket Resale Integration API v0.3.0. Every method validates its
 * input, sends 64-bit values as decimal strings, validates the response before returning it and fails with
 * one error type, UpstreamError (codes in docs/upstream-client.md). Retries, backoff, Retry-After, the
 * circuit breaker, the concurrency cap and the adaptive rate limit are applied to every call.
 */
@Injectable()
export class UpstreamClient implements OnModuleDestroy {
  private readonly options: ResolvedUpstreamOptions;
  private readonly http: UpstreamHttp;
  private keyVerdict: KeyVerdict | undefined;
  private keyCheck: Promise<KeyVerdict> | undefined;

  constructor(@Inject(UPSTREAM_OPTIONS) options: UpstreamOptions, @Optional() metrics?: MetricsService) {
    this.options = resolveUpstreamOptions(options);
    this.http = new UpstreamHttp(
      this.options,
      this.options.logger ?? nestUpstreamLogger(),
      new UpstreamMetrics(metrics?.registry),
    );
  }

  get environment(): string {
    return this.options.environment;
  }

  /** Current adaptive request rate (lowered after 429s). */
  get currentRatePerSecond(): number {
    return this.http.limiter.currentRate;
  }

  /** Sockets of the keep-alive pool: in use (requests in flight) and idle (kept for reuse). */
  connectionStats(): { inUse: number; idle: number } {
    return { inUse: count(this.http.agent.sockets), idle: count(this.http.agent.freeSockets) };
  }

  onModuleDestroy(): void {
    this.close();
  }

  /** Closes the keep-alive sockets. */
  close(): void {
    this.http.close();
  }

  /**
   * `GET /indexer/events/upcoming?limit&cursor` — one page (contract 4.4). Read: retried on 5xx, network
   * errors and timeouts with backoff; 429 honours Retry-After. An empty page is a success.
   */
  listUpcomingEvents(input: ListUpcomingEventsInput = {}): Promise<Page<UpcomingEvent>> {
    const limit = pageLimit(input.limit, this.options.pageLimit);
    return this.call(input, {
      operation: 'listUpcomingEvents',
      kind: 'read',
      method: 'GET',
      route: EVENTS_PATH,
      path: `${EVENTS_PATH}${query({ limit, cursor: input.cursor })}`,
      parse: parseEventsPage,
    });
  }

  /**
   * `GET {UPSTREAM_ACTIVE_LISTINGS_PATH}?eventId&limit&cursor` — one page of active listings (contract 4.5;
   * path not shown by the contract, default /indexer/listings/active). Not sorted by price. Read: retried.
   */
  listActiveListings(input: ListActiveListingsInput = {}): Promise<Page<ActiveListing>> {
    const limit = pageLimit(input.limit, this.options.pageLimit);
    const route = this.options.paths.activeListings;
    return this.call(input, {
      operation: 'listActiveListings',
      kind: 'read',
      method: 'GET',
      route,
      path: `${route}${query({
        eventId: input.eventId === undefined ? undefined : this.u64Param(input.eventId, 'eventId'),
        limit,
        cursor: input.cursor,
      })}`,
      parse: parseListingsPage,
    });
  }

  /**
   * Walks every page of upcoming events (contract 4.8): same limit on every page, cursor passed back
   * byte-exact, continues through empty pages, ends only when next_cursor is null; a repeated cursor ends it
   * with BAD_RESPONSE. Yields each page with its progress (page number, items so far).
   */
  walkUpcomingEvents(options: WalkOptions = {}): AsyncGenerator<WalkPage<UpcomingEvent>, void, undefined> {
    const { maxPages, ...page } = options;
    return walkPages(
      'listUpcomingEvents',
      (cursor) => this.listUpcomingEvents({ ...page, cursor }),
      maxPages ?? DEFAULT_MAX_PAGES,
    );
  }

  /** Walks every page of active listings, optionally of one event (same rules as walkUpcomingEvents). */
  walkActiveListings(
    options: WalkListingsOptions = {},
  ): AsyncGenerator<WalkPage<ActiveListing>, void, undefined> {
    const { maxPages, ...page } = options;
    return walkPages(
      'listActiveListings',
      (cursor) => this.listActiveListings({ ...page, cursor }),
      maxPages ?? DEFAULT_MAX_PAGES,
    );
  }

  /**
   * `POST /wallets/users/{subject}/signatures` with header `idempotency-key` (contract 4.1). Builds and signs,
   * does not submit. Retried on 5xx/network/timeout with the SAME idempotency key (the caller's, persisted
   * before the first attempt; never generated or changed here), so a retry returns the same transaction.
   * TIMEOUT or `outcomeUnknown` means it may exist: retry later with the same key.
   */
  signUserTransaction(
    subject: string,
    batch: InstructionBatch,
    idempotencyKey: string,
    options: UpstreamCallOptions = {},
  ): Promise<SignedTransaction> {
    return this.sign('signUserTransaction', 'users', subject, batch, idempotencyKey, options);
  }

  /** `POST /wallets/integrators/{subject}/signatures` (contract 4.2); same rules as signUserTransaction. */
  signIntegratorTransaction(
    subject: string,
    batch: InstructionBatch,
    idempotencyKey: string,
    options: UpstreamCallOptions = {},
  ): Promise<SignedTransaction> {
    return this.sign('signIntegratorTransaction', 'integrators', subject, batch, idempotencyKey, options);
  }

  /**
   * `POST /transactions/submissions` (contract 4.3). Re-sending the same signed bytes is safe, so it is
   * retried like a read. A 200 is not confirmation: inspect `status` (may be null). TIMEOUT never means
   * failure (contract 3, rule 2): track the transaction by re-submitting the same bytes.
   */
  submitTransaction(
    input: SubmitTransactionInput,
    options: UpstreamCallOptions = {},
  ): Promise<SubmissionResult> {
    return this.call(options, {
      operation: 'submitTransaction',
      kind: 'submit',
      method: 'POST',
      route: '/transactions/submissions',
      path: '/transactions/submissions',
      body: () => encodeSubmission(input),
      parse: parseSubmissionResult,
      sensitiveBody: true,
    });
  }

  /**
   * `GET /claim_wallets/purchase-status?idempotency-key=…` (contract 4.6; query parameter name configurable)
   * — the outcome of a purchase by its idempotency key. Read: retried. NOT_FOUND: nothing known by that key.
   */
  getPurchaseStatus(idempotencyKey: string, options: UpstreamCallOptions = {}): Promise<PurchaseStatus> {
    const { purchaseStatus, purchaseStatusKeyParam } = this.options.paths;
    return this.call(options, {
      operation: 'getPurchaseStatus',
      kind: 'read',
      method: 'GET',
      route: purchaseStatus,
      path: () => {
        assertIdempotencyKey(idempotencyKey);
        return `${purchaseStatus}${query({ [purchaseStatusKeyParam]: idempotencyKey })}`;
      },
      parse: parsePurchaseStatus,
    });
  }

  /**
   * `GET {UPSTREAM_PROTOCOL_CONFIG_PATH}` (default /indexer/protocol-config; not shown by the contract):
   * `stablecoin_decimals` checked to be an integer 0..18. Read: retried.
   */
  getProtocolConfig(options: UpstreamCallOptions = {}): Promise<ProtocolConfig> {
    const route = this.options.paths.protocolConfig;
    return this.call(options, {
      operation: 'getProtocolConfig',
      kind: 'read',
      method: 'GET',
      route,
      path: route,
      parse: parseProtocolConfig,
    });
  }

  /**
   * `GET /indexer/events/upcoming?limit=1` — a 200 shows the key works, even with empty items (contract 5.7).
   * Never throws for upstream answers: returns a verdict (401 = key or environment wrong, 403 = missing read
   * permission, else unreachable). One attempt per retry budget of a read, within the read timeout.
   */
  async verifyKey(options: UpstreamCallOptions = {}): Promise<KeyVerdict> {
    const environment = this.options.environment;
    try {
      await this.call(options, {
        operation: 'verifyKey',
        kind: 'read',
        method: 'GET',
        route: EVENTS_PATH,
        path: `${EVENTS_PATH}?limit=1`,
        parse: () => undefined,
        ignoreBody: true,
        maxAttempts: 2,
        deadlineMs: Math.min(this.options.timeouts.deadlineMs, this.options.timeouts.readMs * 2),
      });
      return { ok: true, environment, checkedAt: this.options.clock.now() };
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      return {
        ok: false,
        environment,
        checkedAt: this.options.clock.now(),
        code: error.code,
        ...(error.status === undefined ? {} : { status: error.status }),
        reason: this.verdictReason(error),
      };
    }
  }

  /**
   * verifyKey() reused for UPSTREAM_KEY_CHECK_TTL_MS (readiness probes every few seconds must not each hit
   * the upstream); a 401 seen on any call since the last check invalidates it at once.
   */
  async verifyKeyCached(): Promise<KeyVerdict> {
    const now = this.options.clock.now();
    const cached = this.keyVerdict;
    const unauthorizedSince =
      cached !== undefined && (this.http.lastUnauthorizedAt ?? -Infinity) >= cached.checkedAt;
    if (cached !== undefined && !unauthorizedSince && now - cached.checkedAt < this.options.keyCheckTtlMs)
      return cached;
    this.keyCheck ??= this.verifyKey().finally(() => {
      this.keyCheck = undefined;
    });
    this.keyVerdict = await this.keyCheck;
    return this.keyVerdict;
  }

  get readinessRequiresReachable(): boolean {
    return this.options.readinessRequiresReachable;
  }

  private verdictReason(error: UpstreamError): string {
    const env = this.options.environment;
    switch (error.code) {
      case 'UNAUTHORIZED':
        return `the upstream rejected UPSTREAM_API_KEY (401): wrong, incomplete or from another environment than ${env}`;
      case 'FORBIDDEN':
        return 'the key works but lacks the read permission (403)';
      case 'TIMEOUT':
        return 'the upstream did not answer in time';
      case 'UNAVAILABLE':
        return `the upstream is unreachable or failing (${error.status ?? 'no HTTP answer'})`;
      case 'RATE_LIMITED':
        return 'the upstream is rate limiting this key (429)';
      case 'REJECTED':
      case 'NOT_FOUND':
      case 'CONFLICT':
      case 'BAD_RESPONSE':
        return `unexpected upstream answer (${error.code}${error.status === undefined ? '' : ` ${error.status}`}): check UPSTREAM_BASE_URL`;
    }
    return 'unexpected upstream answer';
  }

  private sign(
    operation: 'signUserTransaction' | 'signIntegratorTransaction',
    wallet: 'users' | 'integrators',
    subject: string,
    batch: InstructionBatch,
    idempotencyKey: string,
    options: UpstreamCallOptions,
  ): Promise<SignedTransaction> {
    return this.call(options, {
      operation,
      kind: 'sign',
      method: 'POST',
      route: `/wallets/${wallet}/{subject}/signatures`,
      path: () => {
        assertSubject(subject);
        return `/wallets/${wallet}/${encodeURIComponent(subject)}/signatures`;
      },
      body: () => {
        assertIdempotencyKey(idempotencyKey);
        return encodeInstructionBatch(batch);
      },
      headers: { 'idempotency-key': idempotencyKey },
      parse: parseSignedTransaction,
      sensitiveBody: true,
    });
  }

  private u64Param(value: bigint, name: string): string {
    try {
      return encodeU64(value);
    } catch {
      throw new RequestShapeError(`${name} must be a u64 bigint`);
    }
  }

  /** Builds (refusing bad input as REJECTED with 0 attempts), sends with policies, parses, validates. */
  private async call<T>(
    options: UpstreamCallOptions,
    request: Omit<Request<T>, 'path' | 'body'> & {
      path: string | (() => string);
      body?: string | (() => string);
    },
  ): Promise<T> {
    let path: string;
    let body: string | undefined;
    try {
      path = typeof request.path === 'function' ? request.path() : request.path;
      body = typeof request.body === 'function' ? request.body() : request.body;
    } catch (error) {
      if (!(error instanceof RequestShapeError)) throw error;
      throw new UpstreamError({
        code: 'REJECTED',
        operation: request.operation,
        message: `request refused before sending: ${error.message}`,
        attempts: 0,
      });
    }
    const result = await this.http.execute({
      operation: request.operation,
      kind: request.kind,
      method: request.method,
      route: request.route,
      path,
      body,
      headers: request.headers,
      requestId: options.requestId,
      signal: options.signal,
      maxAttempts: request.maxAttempts,
      deadlineMs: request.deadlineMs,
    });
    if (request.ignoreBody === true) return request.parse(undefined);
    try {
      return request.parse(parseJsonSafely(result.body));
    } catch (error) {
      if (!(error instanceof ResponseShapeError) && !(error instanceof JsonParseError)) throw error;
      const excerpt =
        request.sensitiveBody === true ? undefined : safeExcerpt(result.body, [this.options.apiKey]);
      throw new UpstreamError({
        code: 'BAD_RESPONSE',
        operation: request.operation,
        message: error instanceof JsonParseError ? 'response is not valid JSON' : error.message,
        status: 200,
        attempts: result.attempts,
        // A signing/submission 200 we cannot read still happened upstream.
        outcomeUnknown: request.kind !== 'read',
        excerpt,
      });
    }
  }
}
