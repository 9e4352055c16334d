// One piece: the one boundary class to the upstream API (STYLE.md: every outside boundary is one injectable
// class), one typed and documented method per upstream operation. What is not an operation already lives
// beside it: transport and retries in http/, wire codecs in wire/, error mapping in upstream-error.mapper.ts.
import { HttpService } from '@nestjs/axios';
import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { MetricsService } from '../metrics/metrics.service';
import {
  UpstreamAttempt,
  agentOf,
  createUpstreamHttpService,
  httpServiceTransport,
  type CallKind,
} from './http/attempt';
import { UpstreamMetrics } from './http/metrics';
import { RetryLoop } from './http/retry-loop';
import { UpstreamError, safeExcerpt, type UpstreamOperation } from './upstream.error';
import { UpstreamKeyCheck } from './upstream.key-check';
import {
  resolveUpstreamOptions,
  type ResolvedUpstreamOptions,
  type UpstreamOptions,
} from './upstream.options';
import { DEFAULT_MAX_PAGES, walkPages } from './wire/pagination';
import {
  RequestShapeError,
  assertIdempotencyKey,
  assertSubject,
  encodeComponent,
  encodeInstructionBatch,
  encodeSubmission,
  pageLimit,
  query,
  u64Param,
} from './wire/requests';
import {
  ResponseShapeError,
  parseEventsPage,
  parseListingsText,
  parseProtocolConfig,
  parsePurchaseStatus,
  parseSignedTransaction,
  parseSubmissionResult,
} from './wire/responses';
import { JsonParseError, parseJsonSafely } from './wire/safe-json';
import type {
  ActiveListing,
  InstructionBatch,
  KeyVerdict,
  ListActiveListingsInput,
  ListUpcomingEventsInput,
  OwnThrottle,
  Page,
  ProtocolConfig,
  PurchaseStatus,
  SharedThrottle,
  SignedTransaction,
  SubmissionResult,
  SubmitTransactionInput,
  UpcomingEvent,
  UpstreamCallOptions,
  WalkListingsOptions,
  WalkOptions,
  WalkPage,
} from './upstream.types';

import { UPSTREAM_OPTIONS } from './upstream.tokens';

const EVENTS_PATH = '/indexer/events/upcoming';

/** Attempts of a key check (readiness), within min(deadline, this × the read timeout). */
export const VERIFY_KEY_MAX_ATTEMPTS = 2;

/** One upstream call as a method describes it; path and body are built inside the call (see call()). */
interface Request<T> {
  operation: UpstreamOperation;
  kind: CallKind;
  method: 'GET' | 'POST';
  /** Path template for logs. */
  route: string;
  /** Built inside the call, so a refused input rejects the promise (REJECTED, 0 attempts). */
  path: () => string;
  body?: () => string;
  headers?: Record<string, string>;
  /** The status alone is the answer (key check): the body is not read. */
  parse?: (json: unknown) => T;
  /** Instead of `parse`: decodes the body text itself, with the result and errors of parse(parseJsonSafely). */
  parseText?: (text: string) => T;
  /** Signing and submission responses carry signed bytes: no excerpt of them, ever. */
  sensitiveBody?: boolean;
  maxAttempts?: number;
  deadlineMs?: number;
}

/**
 * The only code that talks to the upstream Ticket Resale Integration API v0.3.0. Every method validates its
 * input, sends 64-bit values as decimal strings, validates the response before returning it and fails with
 * one error type, UpstreamError (codes in docs/upstream-client.md). Retries, backoff, Retry-After, the
 * circuit breaker, the concurrency cap and the adaptive rate limit are applied to every call.
 */
@Injectable()
export class UpstreamClient implements OnApplicationShutdown {
  /**
   * In the app every part comes from UpstreamModule: `httpService` (createUpstreamHttpService, over the
   * upstream's keep-alive agent) is the one way requests are sent, through `loop` (retries, rate limit) and
   * its attempt (breaker, bulkhead). Outside Nest (CLIs, benchmarks, contract tests) use `UpstreamClient.create`.
   */
  constructor(
    @Inject(UPSTREAM_OPTIONS) private readonly options: ResolvedUpstreamOptions,
    private readonly httpService: HttpService,
    private readonly loop: RetryLoop,
    private readonly keyCheck: UpstreamKeyCheck,
  ) {}

  /**
   * A client outside Nest, built from the same parts UpstreamModule provides: `metrics` registers its metrics
   * (none exported without), `httpService` defaults to the one createUpstreamHttpService builds.
   */
  static create(
    options: UpstreamOptions,
    metrics?: MetricsService,
    httpService?: HttpService,
  ): UpstreamClient {
    const resolved = resolveUpstreamOptions(options);
    const http = httpService ?? createUpstreamHttpService(resolved);
    const upstreamMetrics = new UpstreamMetrics(metrics);
    const attempt = new UpstreamAttempt(
      resolved,
      httpServiceTransport(http, resolved.apiKey),
      upstreamMetrics,
    );
    const loop = new RetryLoop(resolved, attempt, upstreamMetrics);
    return new UpstreamClient(resolved, http, loop, new UpstreamKeyCheck(resolved, loop));
  }

  /** UPSTREAM_ENVIRONMENT the key is meant for (sandbox or production). */
  get environment(): string {
    return this.options.environment;
  }

  /**
   * Nest shutdown hook. Not onModuleDestroy: Nest runs destroy hooks before it closes the HTTP server,
   * so requests still in flight during a graceful shutdown would lose their upstream connection.
   */
  onApplicationShutdown(): void {
    this.close();
  }

  /** Closes the keep-alive sockets. */
  close(): void {
    agentOf(this.httpService).destroy();
  }

  /**
   * `GET /indexer/events/upcoming?limit&cursor` — one page (contract 4.4). Read: retried on 5xx, network
   * errors and timeouts with backoff; 429 honours Retry-After. An empty page is a success.
   */
  listUpcomingEvents(input: ListUpcomingEventsInput = {}): Promise<Page<UpcomingEvent>> {
    return this.call(input, {
      operation: 'listUpcomingEvents',
      kind: 'read',
      method: 'GET',
      route: EVENTS_PATH,
      path: () =>
        EVENTS_PATH + query({ limit: pageLimit(input.limit, this.options.pageLimit), cursor: input.cursor }),
      parse: parseEventsPage,
    });
  }

  /**
   * `GET {UPSTREAM_ACTIVE_LISTINGS_PATH}?eventId&limit&cursor` — one page of active listings (contract 4.5;
   * path not shown by the contract, default /indexer/listings/active). Not sorted by price. Read: retried.
   */
  listActiveListings(input: ListActiveListingsInput = {}): Promise<Page<ActiveListing>> {
    const route = this.options.paths.activeListings;
    return this.call(input, {
      operation: 'listActiveListings',
      kind: 'read',
      method: 'GET',
      route,
      path: () =>
        route +
        query({
          eventId: input.eventId === undefined ? undefined : u64Param(input.eventId, 'eventId'),
          limit: pageLimit(input.limit, this.options.pageLimit),
          cursor: input.cursor,
        }),
      parseText: parseListingsText,
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
      path: () => '/transactions/submissions',
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
      path: () => route,
      parse: parseProtocolConfig,
    });
  }

  /**
   * `GET /indexer/events/upcoming?limit=1` — a 200 shows the key works, even with empty items (contract 5.7).
   * Never throws for upstream answers: returns a verdict (401 = key or environment wrong, 403 = missing read
   * permission, else unreachable). Up to 2 attempts, within twice the read timeout.
   */
  async verifyKey(options: UpstreamCallOptions = {}): Promise<KeyVerdict> {
    const { environment, timeouts } = this.options;
    try {
      await this.call(options, {
        operation: 'verifyKey',
        kind: 'read',
        method: 'GET',
        route: EVENTS_PATH,
        path: () => `${EVENTS_PATH}?limit=1`,
        maxAttempts: VERIFY_KEY_MAX_ATTEMPTS,
        deadlineMs: Math.min(timeouts.deadlineMs, timeouts.readMs * VERIFY_KEY_MAX_ATTEMPTS),
      });
      return { ok: true, environment, checkedAt: this.options.clock.now() };
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      return this.keyCheck.verdictFor(error);
    }
  }

  /**
   * verifyKey() reused for UPSTREAM_KEY_CHECK_TTL_MS (readiness probes every few seconds must not each hit
   * the upstream); a 401 seen on any call since a good verdict invalidates it at once.
   */
  verifyKeyCached(): Promise<KeyVerdict> {
    return this.keyCheck.cached(() => this.verifyKey());
  }

  /**
   * The request rate is the whole service's budget (UPSTREAM_RATE_LIMIT_RPS): replicas/ sets this replica's
   * share of it, 1 / live replicas, at every heartbeat (docs/upstream-client.md, "Across replicas").
   */
  setRateShare(share: number): void {
    this.loop.limiter.setShare(share);
  }

  /**
   * This replica's request rate now (requests per second): its share of UPSTREAM_RATE_LIMIT_RPS, lowered after
   * 429s. Background work paces itself to a part of it (catalog sync's hot walks), so what it leaves stays free.
   */
  get currentRatePerSecond(): number {
    return this.loop.limiter.currentRate;
  }

  /** Another replica's 429 (read by replicas/ at each heartbeat): lowers and pauses this replica the same way. */
  applySharedThrottle(throttle: SharedThrottle): void {
    this.loop.limiter.applyShared(throttle);
  }

  /** Listens to this replica's own 429s (for replicas/ to publish them); returns the unsubscribe function. */
  onThrottled(listener: (throttle: OwnThrottle) => void): () => void {
    return this.loop.limiter.onThrottled(listener);
  }

  /** UPSTREAM_READY_REQUIRES_REACHABLE: readiness also fails while the upstream is unreachable. */
  get readinessRequiresReachable(): boolean {
    return this.options.readinessRequiresReachable;
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
        return `/wallets/${wallet}/${encodeComponent(subject, 'subject')}/signatures`;
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

  /**
   * Every method's pipeline: build the request (a RequestShapeError becomes REJECTED with 0 attempts), run
   * it through the retry loop (http/retry-loop.ts), parse the 200 body without precision loss and validate
   * it (a ResponseShapeError or invalid JSON becomes BAD_RESPONSE with a safe excerpt).
   */
  private async call<T>(options: UpstreamCallOptions, request: Request<T>): Promise<T> {
    let path: string;
    let body: string | undefined;
    try {
      path = request.path();
      body = request.body?.();
    } catch (error) {
      if (!(error instanceof RequestShapeError)) throw error;
      throw new UpstreamError({
        code: 'REJECTED',
        operation: request.operation,
        message: `request refused before sending: ${error.message}`,
        attempts: 0,
      });
    }
    const result = await this.loop.execute({
      operation: request.operation,
      kind: request.kind,
      method: request.method,
      route: request.route,
      path,
      body,
      headers: request.headers,
      requestId: options.requestId,
      signal: options.signal,
      notAfter: options.notAfter,
      maxAttempts: request.maxAttempts,
      deadlineMs: request.deadlineMs,
    });
    const { parse } = request;
    const decode =
      request.parseText ?? (parse === undefined ? undefined : (text: string) => parse(parseJsonSafely(text)));
    if (decode === undefined) return undefined as T;
    try {
      return decode(result.body);
    } catch (error) {
      if (!(error instanceof ResponseShapeError) && !(error instanceof JsonParseError)) throw error;
      throw new UpstreamError({
        code: 'BAD_RESPONSE',
        operation: request.operation,
        message: error instanceof JsonParseError ? 'response is not valid JSON' : error.message,
        status: 200,
        attempts: result.attempts,
        // A signing/submission 200 we cannot read still happened upstream.
        outcomeUnknown: request.kind !== 'read',
        excerpt: request.sensitiveBody === true ? undefined : safeExcerpt(result.body, [this.options.apiKey]),
      });
    }
  }
}
