import { HttpService } from '@nestjs/axios';
import { Inject, Injectable, Optional, type OnApplicationShutdown } from '@nestjs/common';
import { MetricsService } from '../metrics/metrics.service';
import { EVENTS_PATH, UpstreamCaller, pageLimit, query, u64Param } from './upstream.call';
import { UpstreamHttp } from './upstream.http';
import { UpstreamKeyCheck } from './upstream.key-check';
import { nestUpstreamLogger } from './upstream.logger';
import { UpstreamMetrics } from './upstream.metrics';
import {
  resolveUpstreamOptions,
  type ResolvedUpstreamOptions,
  type UpstreamOptions,
} from './upstream.options';
import { DEFAULT_MAX_PAGES, walkPages } from './upstream.pagination';
import {
  assertIdempotencyKey,
  assertSubject,
  encodeComponent,
  encodeInstructionBatch,
  encodeSubmission,
} from './upstream.requests';
import {
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

/**
 * The only code that talks to the upstream Ticket Resale Integration API v0.3.0. Every method validates its
 * input, sends 64-bit values as decimal strings, validates the response before returning it and fails with
 * one error type, UpstreamError (codes in docs/upstream-client.md). Retries, backoff, Retry-After, the
 * circuit breaker, the concurrency cap and the adaptive rate limit are applied to every call.
 */
@Injectable()
export class UpstreamClient implements OnApplicationShutdown {
  private readonly options: ResolvedUpstreamOptions;
  private readonly http: UpstreamHttp;
  private readonly caller: UpstreamCaller;
  private readonly keyCheck: UpstreamKeyCheck;

  constructor(
    @Inject(UPSTREAM_OPTIONS) options: UpstreamOptions,
    @Optional() metrics?: MetricsService,
    @Optional() httpService?: HttpService,
  ) {
    this.options = resolveUpstreamOptions(options);
    this.http = new UpstreamHttp(
      this.options,
      this.options.logger ?? nestUpstreamLogger(),
      new UpstreamMetrics(metrics?.registry),
      httpService,
    );
    this.caller = new UpstreamCaller(this.options, this.http);
    this.keyCheck = new UpstreamKeyCheck(this.options, this.caller, this.http);
  }

  /** UPSTREAM_ENVIRONMENT the key is meant for (sandbox or production). */
  get environment(): string {
    return this.options.environment;
  }

  /** Current adaptive request rate (lowered after 429s). */
  get currentRatePerSecond(): number {
    return this.http.limiter.currentRate;
  }

  /** Sockets of the keep-alive pool: in use (requests in flight) and idle (kept for reuse). */
  connectionStats(): { inUse: number; idle: number } {
    return {
      inUse: count(this.http.transport.agent.sockets),
      idle: count(this.http.transport.agent.freeSockets),
    };
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
    this.http.close();
  }

  /**
   * `GET /indexer/events/upcoming?limit&cursor` — one page (contract 4.4). Read: retried on 5xx, network
   * errors and timeouts with backoff; 429 honours Retry-After. An empty page is a success.
   */
  listUpcomingEvents(input: ListUpcomingEventsInput = {}): Promise<Page<UpcomingEvent>> {
    return this.caller.call(input, {
      operation: 'listUpcomingEvents',
      kind: 'read',
      method: 'GET',
      route: EVENTS_PATH,
      path: () =>
        `${EVENTS_PATH}${query({ limit: pageLimit(input.limit, this.options.pageLimit), cursor: input.cursor })}`,
      parse: parseEventsPage,
    });
  }

  /**
   * `GET {UPSTREAM_ACTIVE_LISTINGS_PATH}?eventId&limit&cursor` — one page of active listings (contract 4.5;
   * path not shown by the contract, default /indexer/listings/active). Not sorted by price. Read: retried.
   */
  listActiveListings(input: ListActiveListingsInput = {}): Promise<Page<ActiveListing>> {
    const route = this.options.paths.activeListings;
    return this.caller.call(input, {
      operation: 'listActiveListings',
      kind: 'read',
      method: 'GET',
      route,
      path: () =>
        `${route}${query({
          eventId: input.eventId === undefined ? undefined : u64Param(input.eventId, 'eventId'),
          limit: pageLimit(input.limit, this.options.pageLimit),
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
    return this.caller.call(options, {
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
    return this.caller.call(options, {
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
    return this.caller.call(options, {
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
   * permission, else unreachable). Up to 2 attempts, within twice the read timeout.
   */
  verifyKey(options: UpstreamCallOptions = {}): Promise<KeyVerdict> {
    return this.keyCheck.verify(options);
  }

  /**
   * verifyKey() reused for UPSTREAM_KEY_CHECK_TTL_MS (readiness probes every few seconds must not each hit
   * the upstream); a 401 seen on any call since a good verdict invalidates it at once.
   */
  verifyKeyCached(): Promise<KeyVerdict> {
    return this.keyCheck.cached();
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
    return this.caller.call(options, {
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
}
