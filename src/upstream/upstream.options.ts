import { UpstreamConfig, type UpstreamEnvironment } from '../config/upstream.config';
import { systemClock, type UpstreamClock } from './http/clock';
import { nestUpstreamLogger, type UpstreamLogger } from './http/logger';

/** What UpstreamModule.forRoot (and `UpstreamClient.create`) takes: resolved address and key, plus tuning. */
export interface UpstreamOptions {
  /** Resolved base URL (UPSTREAM_BASE_URL or the in-process sandbox's), no trailing slash needed. */
  baseUrl: string;
  /** Resolved API key, sent as `x-api-key`. Never logged. */
  apiKey: string;
  environment: UpstreamEnvironment;
  timeouts?: Partial<UpstreamTimeouts>;
  retry?: Partial<UpstreamRetryOptions>;
  breaker?: Partial<UpstreamBreakerOptions>;
  concurrency?: Partial<UpstreamConcurrencyOptions>;
  rateLimit?: Partial<UpstreamRateLimitOptions>;
  paths?: Partial<UpstreamPaths>;
  /** How long a verifyKey() verdict is reused by readiness (ms). */
  keyCheckTtlMs?: number;
  /** Default page size of walks and single-page calls without a limit. */
  pageLimit?: number;
  /** Pino-compatible logger; default: Nest's Logger (which the app routes to pino). */
  logger?: UpstreamLogger;
  /** Time source for retries, deadlines and the rate limiter (tests pass a virtual clock). */
  clock?: UpstreamClock;
  /** [0, 1) source for backoff jitter (tests pass a fixed one). */
  random?: () => number;
  /** When true, readiness also fails while the upstream is unreachable (default: only key problems fail). */
  readinessRequiresReachable?: boolean;
}

export interface UpstreamTimeouts {
  /** Per attempt: reads (events, listings, protocol config, purchase status, key check). */
  readMs: number;
  /** Per attempt: both signing operations. */
  signMs: number;
  /** Per attempt: submission. */
  submitMs: number;
  /** Whole call, all attempts and waits included. */
  deadlineMs: number;
}

export interface UpstreamRetryOptions {
  /** Attempts per call, the first included. */
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** Longest Retry-After we wait; a longer one ends the call with RATE_LIMITED carrying retryAfterMs. */
  retryAfterCapMs: number;
}

export interface UpstreamBreakerOptions {
  /** Consecutive failed attempts (5xx, network, timeout) that open the circuit. */
  consecutiveFailures: number;
  /** Open → half-open after this long; one trial call then closes or re-opens it. */
  halfOpenAfterMs: number;
}

export interface UpstreamConcurrencyOptions {
  /** In-flight upstream requests (also the keep-alive agent's maxSockets). */
  maxInFlight: number;
  /** Calls waiting for a slot; beyond this a call fails fast with UNAVAILABLE. */
  maxQueued: number;
}

/** Lowered on 429; each quiet 5 s adds back a tenth of ratePerSecond (rate-limiter.ts). */
export interface UpstreamRateLimitOptions {
  ratePerSecond: number;
  minRatePerSecond: number;
}

/** Paths the contract does not show (DESIGN: configuration with documented defaults). */
export interface UpstreamPaths {
  activeListings: string;
  protocolConfig: string;
  purchaseStatus: string;
  purchaseStatusKeyParam: string;
}

/** Every option decided, once (resolveUpstreamOptions); what the client and its parts read. */
export interface ResolvedUpstreamOptions {
  baseUrl: string;
  apiKey: string;
  environment: UpstreamEnvironment;
  timeouts: UpstreamTimeouts;
  retry: UpstreamRetryOptions;
  breaker: UpstreamBreakerOptions;
  concurrency: UpstreamConcurrencyOptions;
  rateLimit: UpstreamRateLimitOptions;
  paths: UpstreamPaths;
  keyCheckTtlMs: number;
  pageLimit: number;
  logger: UpstreamLogger;
  clock: UpstreamClock;
  random: () => number;
  readinessRequiresReachable: boolean;
}

/** The tuning that maps one-to-one onto UPSTREAM_* variables. */
function tuningFromConfig(config: UpstreamConfig) {
  return {
    timeouts: {
      readMs: config.UPSTREAM_READ_TIMEOUT_MS,
      signMs: config.UPSTREAM_SIGN_TIMEOUT_MS,
      submitMs: config.UPSTREAM_SUBMIT_TIMEOUT_MS,
      deadlineMs: config.UPSTREAM_DEADLINE_MS,
    },
    retry: {
      maxAttempts: config.UPSTREAM_MAX_ATTEMPTS,
      baseDelayMs: config.UPSTREAM_BACKOFF_BASE_MS,
      maxDelayMs: config.UPSTREAM_BACKOFF_MAX_MS,
      retryAfterCapMs: config.UPSTREAM_RETRY_AFTER_CAP_MS,
    },
    breaker: {
      consecutiveFailures: config.UPSTREAM_BREAKER_THRESHOLD,
      halfOpenAfterMs: config.UPSTREAM_BREAKER_HALF_OPEN_MS,
    },
    concurrency: { maxInFlight: config.UPSTREAM_MAX_CONCURRENCY, maxQueued: config.UPSTREAM_MAX_QUEUE },
    rateLimit: {
      ratePerSecond: config.UPSTREAM_RATE_LIMIT_RPS,
      minRatePerSecond: config.UPSTREAM_RATE_LIMIT_MIN_RPS,
    },
    paths: {
      activeListings: config.UPSTREAM_ACTIVE_LISTINGS_PATH,
      protocolConfig: config.UPSTREAM_PROTOCOL_CONFIG_PATH,
      purchaseStatus: config.UPSTREAM_PURCHASE_STATUS_PATH,
      purchaseStatusKeyParam: config.UPSTREAM_PURCHASE_STATUS_KEY_PARAM,
    },
    keyCheckTtlMs: config.UPSTREAM_KEY_CHECK_TTL_MS,
    pageLimit: config.UPSTREAM_PAGE_LIMIT,
    readinessRequiresReachable: config.UPSTREAM_READY_REQUIRES_REACHABLE,
  };
}

/** Defaults of options not given: the documented environment defaults (one source: UpstreamConfig). */
export const UPSTREAM_DEFAULTS = tuningFromConfig(new UpstreamConfig());

const resolvedOnce = new WeakSet<object>();

/**
 * Fills in every default and checks address and key, once: UpstreamModule.forRoot resolves and shares the
 * result; an object this function returned comes back as is.
 */
export function resolveUpstreamOptions(options: UpstreamOptions): ResolvedUpstreamOptions {
  if (resolvedOnce.has(options)) return options as ResolvedUpstreamOptions;
  if (!/^https?:\/\//.test(options.baseUrl)) throw new RangeError('upstream baseUrl must be an http(s) URL');
  if (typeof options.apiKey !== 'string' || options.apiKey.length === 0) {
    throw new RangeError('upstream apiKey must be set (UPSTREAM_API_KEY)');
  }
  const retry = { ...UPSTREAM_DEFAULTS.retry, ...options.retry };
  const rateLimit = { ...UPSTREAM_DEFAULTS.rateLimit, ...options.rateLimit };
  const resolved: ResolvedUpstreamOptions = {
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    apiKey: options.apiKey,
    environment: options.environment,
    timeouts: { ...UPSTREAM_DEFAULTS.timeouts, ...options.timeouts },
    retry: { ...retry, maxDelayMs: Math.max(retry.maxDelayMs, retry.baseDelayMs) },
    breaker: { ...UPSTREAM_DEFAULTS.breaker, ...options.breaker },
    concurrency: { ...UPSTREAM_DEFAULTS.concurrency, ...options.concurrency },
    rateLimit: {
      ...rateLimit,
      minRatePerSecond: Math.min(rateLimit.minRatePerSecond, rateLimit.ratePerSecond),
    },
    paths: { ...UPSTREAM_DEFAULTS.paths, ...options.paths },
    keyCheckTtlMs: options.keyCheckTtlMs ?? UPSTREAM_DEFAULTS.keyCheckTtlMs,
    pageLimit: options.pageLimit ?? UPSTREAM_DEFAULTS.pageLimit,
    logger: options.logger ?? nestUpstreamLogger(),
    clock: options.clock ?? systemClock,
    random: options.random ?? Math.random,
    readinessRequiresReachable:
      options.readinessRequiresReachable ?? UPSTREAM_DEFAULTS.readinessRequiresReachable,
  };
  resolvedOnce.add(resolved);
  return resolved;
}

/**
 * UpstreamOptions from the validated environment. `resolved` carries the address and key actually used:
 * UPSTREAM_BASE_URL/UPSTREAM_API_KEY, or the in-process sandbox's when UPSTREAM_BASE_URL is unset.
 */
export function upstreamOptionsFromConfig(
  config: UpstreamConfig,
  resolved: { baseUrl: string; apiKey: string },
  extra: Pick<UpstreamOptions, 'logger' | 'clock' | 'random'> = {},
): UpstreamOptions {
  return {
    baseUrl: resolved.baseUrl,
    apiKey: resolved.apiKey,
    environment: config.UPSTREAM_ENVIRONMENT,
    ...tuningFromConfig(config),
    ...extra,
  };
}
