import { AppConfig } from './config/app.config';
import { AuthConfig } from './config/auth.config';
import { CheckoutConfig } from './config/checkout.config';
import { ListingsConfig } from './config/listings.config';
import { SandboxEnv } from './config/sandbox.config';
import { SyncConfig } from './config/sync.config';
import { TransactionsConfig } from './config/transactions.config';
import { UpstreamConfig } from './config/upstream.config';
import { WebhooksConfig } from './config/webhooks.config';
import { OBSERVATION_WRITE_TIMEOUT_MS } from './catalog-sync/mirror-observations';
import { SAMPLE_WALK_TIMEOUT_MS } from './catalog-sync/served-accuracy.sampler';
import { MAX_STEPS_PER_DRIVE } from './checkout/checkout.driver';
import { WAIT_POLL_MS } from './checkout/checkout.service';
import { FRESH_READ_MAX_WALKS } from './listings/live-listing.reader';
import { REFRESH_EVENT_MAX_ATTEMPTS } from './listings/mirror-refresh.handler';
import { orderBackoffSettings } from './checkout/order.committer';
import { MAX_REFRESH_TRIES } from './checkout/order.settlement';
import { MAX_POLLS_PER_DRIVE } from './checkout/order.tracker';
import { txBackoffSettings } from './transactions/transactions.backoff';
import { MIN_ATTEMPT_MS } from './upstream/http/retry-loop';
import { DEFAULT_RETRY_AFTER_SECONDS } from './upstream/upstream-error.mapper';
import { fullJitterDelay } from './upstream/http/backoff';
import { DEFAULT_MAX_PAGES } from './upstream/wire/pagination';
import { backoffCeiling, type BackoffSettings } from './durable-work/backoff.policy';
import {
  MAX_DELIVERY_ATTEMPTS,
  RETRY_JITTER,
  RETRY_SCHEDULE_MS,
  retryCeilingMs,
} from './webhooks/delivery.schedule';
import { PRUNE_MAX_BATCHES } from './webhooks/outbox.pruner';
import { PRUNE_BATCH } from './webhooks/outbox.repository';

/**
 * What is retried, how often, and the worst case: every retry / lease / poll / interval / timeout / give-up setting
 * of the service, with its default read from the config classes, and the worst cases computed from a config.
 * docs/RETRIES.md is rendered from this file (`npm run docs:retries`); retries.catalog.spec.ts fails when the two
 * disagree or when a config class gains a retry-like variable this catalog does not list.
 *
 * Constants are imported from the files that use them; the few written inline there are copied below with a
 * comment naming file and place: when one changes there, change it here too.
 */

/** Every configuration class the service validates, as one bundle (defaults: `defaultRetriesConfig()`). */
export interface RetriesConfig {
  app: AppConfig;
  auth: AuthConfig;
  upstream: UpstreamConfig;
  checkout: CheckoutConfig;
  transactions: TransactionsConfig;
  sync: SyncConfig;
  listings: ListingsConfig;
  webhooks: WebhooksConfig;
  sandbox: SandboxEnv;
}

/** The defaults: what the service runs with when no variable is set. */
export function defaultRetriesConfig(): RetriesConfig {
  return {
    app: new AppConfig(),
    auth: new AuthConfig(),
    upstream: new UpstreamConfig(),
    checkout: new CheckoutConfig(),
    transactions: new TransactionsConfig(),
    sync: new SyncConfig(),
    listings: new ListingsConfig(),
    webhooks: new WebhooksConfig(),
    sandbox: new SandboxEnv(),
  };
}

export type RetryModule =
  'upstream' | 'checkout' | 'transactions' | 'catalog-sync' | 'webhooks' | 'service' | 'sandbox';

export const MODULE_TITLES: Record<RetryModule, string> = {
  upstream: 'Upstream client (every upstream call)',
  checkout: 'Checkout (orders)',
  transactions: 'Transactions (ledger)',
  'catalog-sync': 'Catalog sync (mirror passes)',
  webhooks: 'Webhooks (deliveries to marketplace receivers, outbox retention)',
  service: 'Service (HTTP, health, database, auth, read API)',
  sandbox: 'Sandbox (the test upstream only)',
};

export type SettingUnit = 'ms' | 's' | 'count' | 'rps' | 'factor' | 'flag';

/** One setting: an environment variable (default from its config class) or a code constant. */
export interface RetrySetting {
  name: string;
  source: 'env' | 'constant';
  module: RetryModule;
  value: number | boolean;
  unit: SettingUnit;
  /** What it bounds (or paces). */
  bounds: string;
  /** Where it is read. */
  where: string;
}

// ---- code constants: imported where their file exports them; the inline ones below are copies (keep in step) --

/** src/upstream/listing-search.ts, `maxPages: 10_000` of a one-listing search walk (inline). */
export const REVALIDATION_MAX_PAGES = 10_000;
/** src/checkout/checkout.service.ts `WAIT_POLL_MS`: `GET /v1/orders/{id}?wait=` re-reads. */
export const ORDER_WAIT_POLL_MS = WAIT_POLL_MS;
/** src/upstream/http/rate-limiter.ts, `recoveryIntervalMs: 5_000` default (inline). */
export const RATE_LIMIT_RECOVERY_INTERVAL_MS = 5_000;
/** src/upstream/http/rate-limiter.ts, `recoveryStep: 0.1` default (inline). */
export const RATE_LIMIT_RECOVERY_STEP = 0.1;
/** src/upstream/upstream.client.ts verifyKey, `maxAttempts: 2` (inline). */
export const VERIFY_KEY_MAX_ATTEMPTS = 2;
/** src/catalog-sync/sync-pass.runner.ts `WRITE_MAX_DELAY_MS` (not exported). */
export const SYNC_WRITE_MAX_DELAY_MS = 1000;
/** src/catalog-sync/catalog-sync.service.ts beforeApplicationShutdown, `Date.now() + 5000` (inline). */
export const SYNC_SHUTDOWN_WAIT_MS = 5000;
/** src/catalog-sync/mirror-generation.listener.ts `retryMs = 1000` default (the read API passes its own). */
export const LISTENER_RECONNECT_DEFAULT_MS = 1000;
/** Retry-After caps of the two background queues: 4 × their maximum delay (the lead's backoff switch). */
export const RETRY_AFTER_CAP_FACTOR = 4;

export {
  FRESH_READ_MAX_WALKS,
  MAX_POLLS_PER_DRIVE,
  MAX_REFRESH_TRIES,
  MAX_STEPS_PER_DRIVE,
  MIN_ATTEMPT_MS,
  REFRESH_EVENT_MAX_ATTEMPTS,
  DEFAULT_RETRY_AFTER_SECONDS,
};

// ---- the backoff settings of the two background queues ---------------------------------------------------

/** Worst delay of one retry after `failures` earlier failures: the jitter's ceiling, or the capped Retry-After. */
export function worstRetryDelay(settings: BackoffSettings, failures: number, withRetryAfter = true): number {
  const ceiling = backoffCeiling(settings, failures);
  return withRetryAfter ? Math.max(ceiling, settings.retryAfterCapMs) : ceiling;
}

/** The upstream client's in-call backoff ceiling after attempt `attempt` failed (http/backoff.ts, random = 1). */
export function upstreamBackoffCeiling(config: UpstreamConfig, attempt: number): number {
  // resolveUpstreamOptions raises maxDelayMs to baseDelayMs when it is lower.
  const max = Math.max(config.UPSTREAM_BACKOFF_MAX_MS, config.UPSTREAM_BACKOFF_BASE_MS);
  return fullJitterDelay(attempt, config.UPSTREAM_BACKOFF_BASE_MS, max, () => 1);
}

// ---- the catalog ----------------------------------------------------------------------------------------------

type Described = Omit<RetrySetting, 'name' | 'source' | 'value' | 'module'>;

function env<C extends object>(
  module: RetryModule,
  config: C,
  name: keyof C & string,
  described: Described,
): RetrySetting {
  const value = config[name];
  if (typeof value !== 'number' && typeof value !== 'boolean')
    throw new TypeError(`${name} is not a number or boolean`);
  return { name, source: 'env', module, value, ...described };
}

function constant(module: RetryModule, name: string, value: number, described: Described): RetrySetting {
  return { name, source: 'constant', module, value, ...described };
}

const CFG = 'src/config/';

/** Every retry / lease / poll / interval / timeout / give-up setting, with its value in `config`. */
export function retriesCatalog(config: RetriesConfig = defaultRetriesConfig()): RetrySetting[] {
  const {
    app,
    auth,
    upstream: u,
    checkout: c,
    transactions: t,
    sync: s,
    listings: l,
    webhooks: w,
    sandbox: sb,
  } = config;
  const up = (name: keyof UpstreamConfig, d: Described) => env('upstream', u, name, d);
  const co = (name: keyof CheckoutConfig, d: Described) => env('checkout', c, name, d);
  const tx = (name: keyof TransactionsConfig, d: Described) => env('transactions', t, name, d);
  const sy = (name: keyof SyncConfig, d: Described) => env('catalog-sync', s, name, d);
  const upWhere = `${CFG}upstream.config.ts → upstream/upstream.options.ts`;
  return [
    // -- upstream -------------------------------------------------------------------------------------------
    up('UPSTREAM_MAX_ATTEMPTS', {
      unit: 'count',
      bounds:
        'HTTP attempts per upstream call, the first included (retried: 500/502/503/504, network, timeout, 429)',
      where: `${upWhere}, http/retry-loop.ts`,
    }),
    up('UPSTREAM_DEADLINE_MS', {
      unit: 'ms',
      bounds: 'one whole call: every attempt, backoff sleep, Retry-After wait and rate-limiter wait',
      where: `${upWhere}, http/retry-loop.ts`,
    }),
    up('UPSTREAM_READ_TIMEOUT_MS', {
      unit: 'ms',
      bounds: 'one attempt of a read (events, listings, protocol config, purchase status, key check)',
      where: `${upWhere}, http/attempt.ts`,
    }),
    up('UPSTREAM_SIGN_TIMEOUT_MS', {
      unit: 'ms',
      bounds: 'one attempt of a signing call',
      where: `${upWhere}, http/attempt.ts`,
    }),
    up('UPSTREAM_SUBMIT_TIMEOUT_MS', {
      unit: 'ms',
      bounds: 'one attempt of a submission',
      where: `${upWhere}, http/attempt.ts`,
    }),
    up('UPSTREAM_BACKOFF_BASE_MS', {
      unit: 'ms',
      bounds: 'in-call backoff ceiling after the first failed attempt (full jitter, doubles per attempt)',
      where: `${upWhere}, http/backoff.ts`,
    }),
    up('UPSTREAM_BACKOFF_MAX_MS', {
      unit: 'ms',
      bounds: 'largest in-call backoff ceiling (raised to the base when lower)',
      where: `${upWhere}, http/backoff.ts`,
    }),
    up('UPSTREAM_RETRY_AFTER_CAP_MS', {
      unit: 'ms',
      bounds: 'longest 429 Retry-After waited inside a call; longer ends the call RATE_LIMITED with the wait',
      where: `${upWhere}, http/retry-loop.ts`,
    }),
    up('UPSTREAM_BREAKER_THRESHOLD', {
      unit: 'count',
      bounds: 'consecutive failed attempts that open the circuit (then calls fail fast, not retried)',
      where: `${upWhere}, http/attempt.ts`,
    }),
    up('UPSTREAM_BREAKER_HALF_OPEN_MS', {
      unit: 'ms',
      bounds: 'open circuit → one trial call after this long',
      where: `${upWhere}, http/attempt.ts`,
    }),
    up('UPSTREAM_RATE_LIMIT_RPS', {
      unit: 'rps',
      bounds:
        'request rate of the whole service, a share per live replica (halved by every 429 of any replica)',
      where: `${upWhere}, http/rate-limiter.ts`,
    }),
    up('UPSTREAM_RATE_LIMIT_MIN_RPS', {
      unit: 'rps',
      bounds: 'floor of the lowered rate',
      where: `${upWhere}, http/rate-limiter.ts`,
    }),
    up('UPSTREAM_MAX_CONCURRENCY', {
      unit: 'count',
      bounds: 'requests in flight (bulkhead)',
      where: `${upWhere}, http/attempt.ts`,
    }),
    up('UPSTREAM_MAX_QUEUE', {
      unit: 'count',
      bounds: 'calls waiting for a slot; beyond it UNAVAILABLE at once (not retried)',
      where: `${upWhere}, http/attempt.ts`,
    }),
    up('UPSTREAM_KEY_CHECK_TTL_MS', {
      unit: 'ms',
      bounds: 'reuse of a key-check verdict by readiness (a 401 anywhere invalidates it)',
      where: `${upWhere}, upstream.key-check.ts`,
    }),
    constant('upstream', 'MIN_ATTEMPT_MS', MIN_ATTEMPT_MS, {
      unit: 'ms',
      bounds: 'no retry is started with less time than this left before the deadline',
      where: 'src/upstream/http/retry-loop.ts `MIN_ATTEMPT_MS`',
    }),
    constant('upstream', 'rate limiter recovery interval', RATE_LIMIT_RECOVERY_INTERVAL_MS, {
      unit: 'ms',
      bounds: 'each quiet interval adds back a step of the maximum rate',
      where: 'src/upstream/http/rate-limiter.ts `recoveryIntervalMs`',
    }),
    constant('upstream', 'rate limiter recovery step', RATE_LIMIT_RECOVERY_STEP, {
      unit: 'factor',
      bounds: 'share of UPSTREAM_RATE_LIMIT_RPS added back per quiet interval',
      where: 'src/upstream/http/rate-limiter.ts `recoveryStep`',
    }),
    constant('upstream', 'verifyKey attempts', VERIFY_KEY_MAX_ATTEMPTS, {
      unit: 'count',
      bounds: 'attempts of a key check, within min(UPSTREAM_DEADLINE_MS, 2 × UPSTREAM_READ_TIMEOUT_MS)',
      where: 'src/upstream/upstream.client.ts `verifyKey`',
    }),
    constant('upstream', 'DEFAULT_MAX_PAGES', DEFAULT_MAX_PAGES, {
      unit: 'count',
      bounds: 'pages of one walk (sync passes); more ends the walk with BAD_RESPONSE',
      where: 'src/upstream/wire/pagination.ts `DEFAULT_MAX_PAGES`',
    }),
    constant('upstream', 'DEFAULT_RETRY_AFTER_SECONDS', DEFAULT_RETRY_AFTER_SECONDS, {
      unit: 's',
      bounds: 'Retry-After our HTTP answers give for an upstream 429 that carried none',
      where: 'src/upstream/upstream-error.mapper.ts `DEFAULT_RETRY_AFTER_SECONDS`',
    }),

    // -- checkout -------------------------------------------------------------------------------------------
    co('CHECKOUT_MAX_ATTEMPTS', {
      unit: 'count',
      bounds: 'attempts per order (new key, fresh revalidation after an expired one)',
      where: `${CFG}checkout.config.ts → checkout/order.settlement.ts`,
    }),
    co('CHECKOUT_RETRY_BASE_DELAY_MS', {
      unit: 'ms',
      bounds: "backoff ceiling of a step's first failure (full jitter, doubles per failure)",
      where: `${CFG}checkout.config.ts → checkout/order.committer.ts`,
    }),
    co('CHECKOUT_RETRY_MAX_DELAY_MS', {
      unit: 'ms',
      bounds: 'largest backoff ceiling of a step; Retry-After honoured up to 4 × this',
      where: `${CFG}checkout.config.ts → checkout/order.committer.ts`,
    }),
    co('CHECKOUT_REVALIDATE_GIVE_UP_MS', {
      unit: 'ms',
      bounds:
        "an attempt's revalidation retries (age of the attempt), then the order fails UPSTREAM_UNAVAILABLE",
      where: `${CFG}checkout.config.ts → checkout/order.attempt.ts`,
    }),
    co('CHECKOUT_REVALIDATE_TIMEOUT_MS', {
      unit: 'ms',
      bounds: 'one live revalidation walk (pages and protocol config share one abort signal)',
      where: `${CFG}checkout.config.ts → checkout/checkout.integrator.ts`,
    }),
    co('CHECKOUT_LEASE_MS', {
      unit: 'ms',
      bounds:
        "a drive's hold on an order (renewed by every commit); in-process tracking hands back after half",
      where: `${CFG}checkout.config.ts → checkout/ (driver, tracker, repository)`,
    }),
    co('CHECKOUT_TRACK_POLL_MS', {
      unit: 'ms',
      bounds: 'pause between status re-sends of a submitted order (in process)',
      where: `${CFG}checkout.config.ts → checkout/order.tracker.ts`,
    }),
    co('CHECKOUT_WORKER_INTERVAL_MS', {
      unit: 'ms',
      bounds: 'pause between recovery-worker passes: the latency of every retry after its delay',
      where: `${CFG}checkout.config.ts → checkout/ (worker loop)`,
    }),
    co('CHECKOUT_WORKER_BATCH', {
      unit: 'count',
      bounds: 'orders one worker drives at once; also the orders polled in process per replica',
      where: `${CFG}checkout.config.ts → checkout/ (worker loop), order.tracker.ts`,
    }),
    co('CHECKOUT_MAX_WAIT_MS', {
      unit: 'ms',
      bounds: 'longest `GET /v1/orders/{id}?wait=` hold',
      where: `${CFG}checkout.config.ts → checkout/checkout.service.ts`,
    }),
    co('CHECKOUT_PURCHASE_WINDOW_SECONDS', {
      unit: 's',
      bounds: 'window of the per-buyer per-event order limit (not a retry)',
      where: `${CFG}checkout.config.ts → checkout/order.repository.ts`,
    }),
    constant('checkout', 'MAX_STEPS_PER_DRIVE', MAX_STEPS_PER_DRIVE, {
      unit: 'count',
      bounds: 'steps of one drive, then the order is handed back due at once (bounds a drive, not an order)',
      where: 'src/checkout/checkout.driver.ts `MAX_STEPS_PER_DRIVE`',
    }),
    constant('checkout', 'MAX_POLLS_PER_DRIVE', MAX_POLLS_PER_DRIVE, {
      unit: 'count',
      bounds: 'status polls of one drive (never reached: half a lease ends the drive first)',
      where: 'src/checkout/order.tracker.ts `MAX_POLLS_PER_DRIVE`',
    }),
    constant('checkout', 'MAX_REFRESH_TRIES', MAX_REFRESH_TRIES, {
      unit: 'count',
      bounds: 'mirror refresh passes after `confirmed`, then abandoned (the order stays confirmed)',
      where: 'src/checkout/order.settlement.ts `MAX_REFRESH_TRIES`',
    }),
    constant('checkout', 'revalidation maxPages', REVALIDATION_MAX_PAGES, {
      unit: 'count',
      bounds: 'pages of one revalidation walk (and of one `?fresh=true` walk)',
      where: 'src/upstream/listing-search.ts `maxPages`',
    }),
    constant('checkout', 'WAIT_POLL_MS', ORDER_WAIT_POLL_MS, {
      unit: 'ms',
      bounds: 'database re-reads of a `?wait=` request',
      where: 'src/checkout/checkout.service.ts `WAIT_POLL_MS`',
    }),

    // -- transactions ---------------------------------------------------------------------------------------
    tx('TX_RESUBMIT_BASE_DELAY_MS', {
      unit: 'ms',
      bounds: "backoff ceiling of a row's next tracker look after its first try (doubles per try)",
      where: `${CFG}transactions.config.ts → transactions/transactions.backoff.ts`,
    }),
    tx('TX_RESUBMIT_MAX_DELAY_MS', {
      unit: 'ms',
      bounds: 'largest backoff ceiling; Retry-After honoured up to 4 × this (policy)',
      where: `${CFG}transactions.config.ts → transactions/transactions.backoff.ts`,
    }),
    tx('TX_BLOCKHASH_LIFETIME_MS', {
      unit: 'ms',
      bounds: 'with TX_GIVE_UP_GRACE_MS: the tracker gives up this long after signing',
      where: `${CFG}transactions.config.ts → transactions/transactions.signer.ts, submitter.ts`,
    }),
    tx('TX_GIVE_UP_GRACE_MS', {
      unit: 'ms',
      bounds: 'added to the blockhash lifetime before the tracker gives up',
      where: `${CFG}transactions.config.ts → transactions/transactions.signer.ts, submitter.ts`,
    }),
    tx('TX_SIGN_RESOLVE_WINDOW_MS', {
      unit: 'ms',
      bounds: 'age (since created) until which the tracker repeats a signing whose outcome is unknown',
      where: `${CFG}transactions.config.ts → transactions/ledger-transaction.repository.ts`,
    }),
    tx('TX_LEASE_MS', {
      unit: 'ms',
      bounds: "a claim's hold on a row (request's signing or tracker's attempt); also the first-look delay",
      where: `${CFG}transactions.config.ts → transactions/`,
    }),
    tx('TX_TRACKER_INTERVAL_MS', {
      unit: 'ms',
      bounds: 'pause between tracker passes: the latency of every tracker retry after its delay',
      where: `${CFG}transactions.config.ts → transactions/transactions.tracker.ts`,
    }),
    tx('TX_TRACKER_BATCH', {
      unit: 'count',
      bounds: 'rows one tracker works at once',
      where: `${CFG}transactions.config.ts → transactions/transactions.tracker.ts`,
    }),
    constant('transactions', 'REFRESH_EVENT_MAX_ATTEMPTS', REFRESH_EVENT_MAX_ATTEMPTS, {
      unit: 'count',
      bounds:
        'runs of the after-final mirror refresh of a confirmed list / cancel / buy (selling or the signing routes), then given up',
      where: 'src/listings/mirror-refresh.handler.ts `REFRESH_EVENT_MAX_ATTEMPTS`',
    }),

    // -- catalog sync ---------------------------------------------------------------------------------------
    sy('SYNC_LEASE_TTL_MS', {
      unit: 'ms',
      bounds: "a pass's lease (renewed every third of it while the pass runs; taken over after it lapses)",
      where: `${CFG}sync.config.ts → catalog-sync/sync-lease.ts, sync-pass.runner.ts`,
    }),
    sy('SYNC_EVENTS_INTERVAL_MS', {
      unit: 'ms',
      bounds: 'pause after an events pass ends before the next one',
      where: `${CFG}sync.config.ts → catalog-sync/catalog-sync.scheduler.ts`,
    }),
    sy('SYNC_LISTINGS_INTERVAL_MS', {
      unit: 'ms',
      bounds: 'pause after a listings pass ends before the next one',
      where: `${CFG}sync.config.ts → catalog-sync/catalog-sync.scheduler.ts`,
    }),
    sy('SYNC_JITTER_MS', {
      unit: 'ms',
      bounds: 'random 0..this added to every scheduled pause',
      where: `${CFG}sync.config.ts → catalog-sync/catalog-sync.scheduler.ts`,
    }),
    sy('SYNC_PROTOCOL_CONFIG_REFRESH_MS', {
      unit: 'ms',
      bounds:
        'pause between protocol config refetches (a failed one keeps the cached config); also the age past ' +
        'which a replica re-reads the stored config: the one cache checkout, selling and the read API use',
      where: `${CFG}sync.config.ts → catalog-sync/catalog-sync.scheduler.ts, catalog-sync/protocol-config.cache.ts`,
    }),
    sy('SYNC_PAGE_SIZE', {
      unit: 'count',
      bounds: 'items per upstream page of a pass (pages = items / this)',
      where: `${CFG}sync.config.ts → catalog-sync/sync-pass.runner.ts`,
    }),
    sy('SYNC_READY_GRACE_MS', {
      unit: 'ms',
      bounds: 'time from startup before readiness requires a completed pass per resource',
      where: `${CFG}sync.config.ts → catalog-sync/sync-pass.status.ts`,
    }),
    sy('SYNC_STALE_AFTER_MS', {
      unit: 'ms',
      bounds: 'age of the last completed pass after which readiness reports the resource stale',
      where: `${CFG}sync.config.ts → catalog-sync/sync-pass.status.ts`,
    }),
    sy('SYNC_PROGRESS_LOG_MS', {
      unit: 'ms',
      bounds: 'progress log lines of a running pass',
      where: `${CFG}sync.config.ts → catalog-sync/sync-pass.runner.ts`,
    }),
    sy('SYNC_HOT_MIN_INTERVAL_MS', {
      unit: 'ms',
      bounds:
        'shortest time between two walks of one hot event when the budget has room (SYNC_HOT_TARGET_MS is the ' +
        'ceiling, this the floor); the hot-walk timer ticks at least every half of it',
      where: `${CFG}sync.config.ts → catalog-sync/hot-walk.scheduler.ts`,
    }),
    sy('MIRROR_ACCURACY_SAMPLE_INTERVAL_MS', {
      unit: 'ms',
      bounds:
        "pause between two served-accuracy samples of a replica (one live walk of a served listing's event each: " +
        '0.2 upstream page/s per replica at the default, for events of up to 1,000 listings); 0 = off',
      where: `${CFG}sync.config.ts → catalog-sync/served-accuracy.sampler.ts`,
    }),
    constant('catalog-sync', 'SAMPLE_WALK_TIMEOUT_MS', SAMPLE_WALK_TIMEOUT_MS, {
      unit: 'ms',
      bounds: "one accuracy sample's live walk (cut after this; the sample then decides nothing)",
      where: 'src/catalog-sync/served-accuracy.sampler.ts `SAMPLE_WALK_TIMEOUT_MS`',
    }),
    constant('catalog-sync', 'OBSERVATION_WRITE_TIMEOUT_MS', OBSERVATION_WRITE_TIMEOUT_MS, {
      unit: 'ms',
      bounds:
        "wait of checkout's revalidation (and of a sample) for the mirror write of what it observed; past it the " +
        'step goes on and the write finishes, or fails, on its own (counted, logged)',
      where: 'src/catalog-sync/mirror-observations.ts `OBSERVATION_WRITE_TIMEOUT_MS`',
    }),
    constant('catalog-sync', 'WRITE_MAX_DELAY_MS', SYNC_WRITE_MAX_DELAY_MS, {
      unit: 'ms',
      bounds: 'a batch of pages is written at the latest this long after its first page arrived',
      where: 'src/catalog-sync/sync-pass.runner.ts `WRITE_MAX_DELAY_MS`',
    }),
    constant('catalog-sync', 'shutdown wait', SYNC_SHUTDOWN_WAIT_MS, {
      unit: 'ms',
      bounds: 'wait for cancelled passes on shutdown',
      where: 'src/catalog-sync/catalog-sync.service.ts `beforeApplicationShutdown`',
    }),

    // -- webhooks -------------------------------------------------------------------------------------------
    ...webhookSettings(w),

    // -- service --------------------------------------------------------------------------------------------
    env('service', app, 'HTTP_REQUEST_TIMEOUT_MS', {
      unit: 'ms',
      bounds: 'a whole inbound request (headers and body), else 408',
      where: `${CFG}app.config.ts → app.factory.ts`,
    }),
    env('service', app, 'HTTP_HEADERS_TIMEOUT_MS', {
      unit: 'ms',
      bounds: 'inbound request headers, else 408',
      where: `${CFG}app.config.ts → app.factory.ts`,
    }),
    env('service', app, 'HEALTH_CHECK_TIMEOUT_MS', {
      unit: 'ms',
      bounds: 'each readiness check',
      where: `${CFG}app.config.ts → health/health.controller.ts`,
    }),
    env('service', app, 'SHUTDOWN_TIMEOUT_MS', {
      unit: 'ms',
      bounds: 'graceful shutdown (drain delay included) before the process is forced down',
      where: `${CFG}app.config.ts → main.ts`,
    }),
    env('service', app, 'SHUTDOWN_DRAIN_DELAY_MS', {
      unit: 'ms',
      bounds: 'after SIGTERM: readiness 503, everything else still served, then the server closes',
      where: `${CFG}app.config.ts → main.ts`,
    }),
    env('service', app, 'STATUS_RECORD_INTERVAL_MS', {
      unit: 'ms',
      bounds: "each replica's status-sample recording and pruning (the status page's per-minute figures)",
      where: `${CFG}app.config.ts → status/status.recorder.ts`,
    }),
    env('service', app, 'STATUS_SESSION_TTL_MS', {
      unit: 'ms',
      bounds: "the status page's login cookie; then the key is asked for again",
      where: `${CFG}app.config.ts → status/`,
    }),
    env('service', auth, 'API_KEY_CACHE_TTL_MS', {
      unit: 'ms',
      bounds: 'reuse of a verified API key (revocation delay)',
      where: `${CFG}auth.config.ts → auth/api-key.authenticator.ts`,
    }),
    env('service', auth, 'RATE_LIMIT_WINDOW_MS', {
      unit: 'ms',
      bounds: "window of our clients' rate limits (429 with Retry-After)",
      where: `${CFG}auth.config.ts → auth/`,
    }),
    env('service', l, 'LISTINGS_FRESH_TIMEOUT_MS', {
      unit: 'ms',
      bounds: 'a `?fresh=true` live re-read of one event',
      where: `${CFG}listings.config.ts → listings/`,
    }),
    constant('service', 'fresh read walks', FRESH_READ_MAX_WALKS, {
      unit: 'count',
      bounds:
        'walks of one `?fresh=true` read while null identifiers leave it undecided (then 502), within its timeout',
      where: 'src/listings/live-listing.reader.ts `FRESH_READ_MAX_WALKS`',
    }),
    env('service', l, 'LISTINGS_STATE_REFRESH_MS', {
      unit: 'ms',
      bounds: 're-read of the mirror state; also the LISTEN reconnect delay',
      where: `${CFG}listings.config.ts → listings/mirror-state.tracker.ts`,
    }),

    // -- sandbox --------------------------------------------------------------------------------------------
    env('sandbox', sb, 'SANDBOX_LANDING_DELAY_MS', {
      unit: 'ms',
      bounds: 'how long a sandbox submission stays `processing` before it lands',
      where: `${CFG}sandbox.config.ts → sandbox/`,
    }),
    env('sandbox', sb, 'SANDBOX_BLOCKHASH_LIFETIME_MS', {
      unit: 'ms',
      bounds: 'after this the sandbox answers `expired` for a transaction that did not land',
      where: `${CFG}sandbox.config.ts → sandbox/`,
    }),
    env('sandbox', sb, 'SANDBOX_IDEMPOTENCY_RETENTION_MS', {
      unit: 'ms',
      bounds: 'how long the sandbox remembers an idempotency key',
      where: `${CFG}sandbox.config.ts → sandbox/`,
    }),
  ];
}

/** The webhooks settings and the fixed retry schedule (src/webhooks/delivery.schedule.ts). */
function webhookSettings(w: WebhooksConfig): RetrySetting[] {
  const wh = (name: keyof WebhooksConfig, d: Described) => env('webhooks', w, name, d);
  const where = `${CFG}webhooks.config.ts → webhooks/`;
  return [
    wh('WEBHOOKS_DELIVERY_TIMEOUT_MS', {
      unit: 'ms',
      bounds: 'one send: resolution, connection, request and the response status; else a failed try',
      where: `${where}webhook.sender.ts`,
    }),
    wh('WEBHOOKS_LEASE_MS', {
      unit: 'ms',
      bounds: "a sender's hold on a delivery; a sender killed mid-send is re-sent (same webhook-id) after it",
      where: `${where}delivery.worker.ts`,
    }),
    wh('WEBHOOKS_WORKER_INTERVAL_MS', {
      unit: 'ms',
      bounds: 'pause between delivery-worker passes: the latency of every first send and retry',
      where: `${where}delivery.worker.ts`,
    }),
    wh('WEBHOOKS_WORKER_CONCURRENCY', {
      unit: 'count',
      bounds: 'deliveries one replica sends at once',
      where: `${where}delivery.worker.ts`,
    }),
    ...RETRY_SCHEDULE_MS.map((delay, i) =>
      constant('webhooks', `retry ${i + 1}`, delay, {
        unit: 'ms',
        bounds: `delay after failed try ${i + 1} (± ${RETRY_JITTER * 100} % jitter)${i === RETRY_SCHEDULE_MS.length - 1 ? `; a failure of try ${MAX_DELIVERY_ATTEMPTS} marks the delivery failed` : ''}`,
        where: 'src/webhooks/delivery.schedule.ts `RETRY_SCHEDULE_MS`',
      }),
    ),
    wh('WEBHOOKS_DISABLE_AFTER_HOURS', {
      unit: 'count',
      bounds: 'hours of only failed tries after which an endpoint is disabled (with the reason)',
      where: `${where}webhook-delivery.repository.ts`,
    }),
    wh('WEBHOOKS_SECRET_GRACE_MS', {
      unit: 'ms',
      bounds: 'after a rotation, the old secret signs alongside the new one (not a retry)',
      where: `${where}webhook-endpoint.repository.ts`,
    }),
    wh('WEBHOOKS_RETENTION_DAYS', {
      unit: 'count',
      bounds: 'days events and their delivery log are kept; an older feed cursor is 410',
      where: `${where}outbox.pruner.ts`,
    }),
    wh('WEBHOOKS_PRUNE_INTERVAL_MS', {
      unit: 'ms',
      bounds: `pause between retention passes (each at most ${PRUNE_MAX_BATCHES} batches of ${num(PRUNE_BATCH)} events)`,
      where: `${where}outbox.pruner.ts`,
    }),
  ];
}

// ---- worst cases --------------------------------------------------------------------------------------------

/** A worst-case figure: a number with its arithmetic, or null when the code sets no bound (then `arithmetic` says why). */
export interface Bound {
  value: number | null;
  arithmetic: string;
}

function finite(value: number, arithmetic: string): Bound {
  return { value, arithmetic };
}

function unbounded(why: string): Bound {
  return { value: null, arithmetic: `unbounded while ${why}` };
}

export type UpstreamCallKind = 'read' | 'sign' | 'submit';

export interface UpstreamCallWorstCase {
  kind: UpstreamCallKind;
  attempts: number;
  attemptTimeoutMs: number;
  /** Worst wait before attempt 2, 3, …: the backoff ceiling, or a Retry-After up to the cap when larger. */
  waitsMs: number[];
  time: Bound;
}

/** One upstream call (any method): attempts and time, whatever the upstream answers. */
export function upstreamCallWorstCase(u: UpstreamConfig, kind: UpstreamCallKind): UpstreamCallWorstCase {
  const attempts = u.UPSTREAM_MAX_ATTEMPTS;
  const attemptTimeoutMs =
    kind === 'read'
      ? u.UPSTREAM_READ_TIMEOUT_MS
      : kind === 'sign'
        ? u.UPSTREAM_SIGN_TIMEOUT_MS
        : u.UPSTREAM_SUBMIT_TIMEOUT_MS;
  const waitsMs = Array.from({ length: attempts - 1 }, (_, i) =>
    Math.max(upstreamBackoffCeiling(u, i + 1), u.UPSTREAM_RETRY_AFTER_CAP_MS),
  );
  const unlimited = attempts * attemptTimeoutMs + waitsMs.reduce((a, b) => a + b, 0);
  const time = Math.min(u.UPSTREAM_DEADLINE_MS, unlimited);
  const waits = waitsMs.length === 0 ? '' : ` + ${waitsMs.map(num).join(' + ')}`;
  return {
    kind,
    attempts,
    attemptTimeoutMs,
    waitsMs,
    time: finite(
      time,
      `min(deadline ${num(u.UPSTREAM_DEADLINE_MS)}, ${attempts} × ${num(attemptTimeoutMs)}${waits}) = ${num(time)} ms`,
    ),
  };
}

export interface OrderWorstCaseOptions {
  /** Pages of the event's active listings one revalidation walk reads (default 1). */
  eventListingPages?: number;
}

export interface OrderWorstCase {
  attempts: number;
  backoff: BackoffSettings;
  /** Worst delay of a failed step: the largest ceiling, or the capped Retry-After. */
  worstRetryDelayMs: number;
  /** A due order waits at most one worker interval for a claim (a free worker slot assumed). */
  claimLatencyMs: number;
  /** One revalidation try: the live walk, or a resumed attempt's protocol config read. */
  revalidationTryMs: number;
  revalidationTimePerAttempt: Bound;
  revalidationWalksPerAttempt: Bound;
  /** Time in-process tracking holds an order before handing it back (due at once). */
  trackHandBackMs: number;
  /** Fastest pace of each unbounded loop (calls per minute of one order). */
  perMinute: { signing: number; submissions: number; purchaseStatus: number };
  time: Bound;
  calls: {
    revalidationReads: Bound;
    signing: Bound;
    submissions: Bound;
    purchaseStatus: Bound;
    mirrorRefreshPasses: Bound;
  };
  /** HTTP attempts of the revalidation reads (calls × UPSTREAM_MAX_ATTEMPTS). */
  revalidationHttpAttempts: Bound;
}

/** Per order, from POST to a final state, absent a crash (a free worker slot assumed for claim latency). */
export function orderWorstCase(config: RetriesConfig, options: OrderWorstCaseOptions = {}): OrderWorstCase {
  const { checkout: c, upstream: u } = config;
  const pages = options.eventListingPages ?? 1;
  const backoff = orderBackoffSettings(c);
  const worstRetryDelayMs = worstRetryDelay(backoff, 30);
  const claimLatencyMs = c.CHECKOUT_WORKER_INTERVAL_MS;
  const revalidationTryMs = Math.max(c.CHECKOUT_REVALIDATE_TIMEOUT_MS, u.UPSTREAM_DEADLINE_MS);
  const giveUp = c.CHECKOUT_REVALIDATE_GIVE_UP_MS;
  const perAttemptMs = giveUp + worstRetryDelayMs + claimLatencyMs + revalidationTryMs;
  const walks = Math.floor(giveUp / claimLatencyMs) + 2;
  const attempts = c.CHECKOUT_MAX_ATTEMPTS;
  const readsPerWalk = pages + 1;
  const reads = attempts * walks * readsPerWalk;
  const retryPace = `at most one try per worker pass (${num(claimLatencyMs)} ms)`;
  return {
    attempts,
    backoff,
    worstRetryDelayMs,
    claimLatencyMs,
    revalidationTryMs,
    revalidationTimePerAttempt: finite(
      perAttemptMs,
      `give-up ${num(giveUp)} + worst delay ${num(worstRetryDelayMs)} + claim ${num(claimLatencyMs)} + ` +
        `last try max(${num(c.CHECKOUT_REVALIDATE_TIMEOUT_MS)}, ${num(u.UPSTREAM_DEADLINE_MS)}) = ${num(perAttemptMs)} ms`,
    ),
    revalidationWalksPerAttempt: finite(
      walks,
      `floor(${num(giveUp)} / ${num(claimLatencyMs)}) + 2 = ${num(walks)} (tries ≥ one worker interval apart)`,
    ),
    trackHandBackMs: Math.max(c.CHECKOUT_TRACK_POLL_MS, c.CHECKOUT_LEASE_MS / 2),
    perMinute: {
      signing: perMinute(claimLatencyMs),
      submissions: perMinute(c.CHECKOUT_TRACK_POLL_MS),
      purchaseStatus: perMinute(claimLatencyMs),
    },
    time: unbounded(
      'signing fails transiently, the upstream answers a non-final status, or the purchase status says nothing ' +
        `final: no give-up in checkout outside revalidation (bounded part: ${attempts} × ${num(perAttemptMs)} = ` +
        `${num(attempts * perAttemptMs)} ms of revalidation)`,
    ),
    calls: {
      revalidationReads: finite(
        reads,
        `${attempts} attempts × ${num(walks)} walks × (${pages} listings page${pages === 1 ? '' : 's'} + 1 protocol config) = ${num(reads)}`,
      ),
      signing: unbounded(`signing fails with 5xx / timeout / 429: retried with the same key, ${retryPace}`),
      submissions: unbounded(
        `the upstream answers processing / null: re-sent every ${num(c.CHECKOUT_TRACK_POLL_MS)} ms in process, ` +
          `or 5xx / timeout: ${retryPace}`,
      ),
      purchaseStatus: unbounded(`the lookup fails or says pending / unknown: ${retryPace}`),
      mirrorRefreshPasses: finite(
        MAX_REFRESH_TRIES,
        `MAX_REFRESH_TRIES = ${MAX_REFRESH_TRIES} (after confirmed)`,
      ),
    },
    revalidationHttpAttempts: finite(
      reads * u.UPSTREAM_MAX_ATTEMPTS,
      `${num(reads)} × ${u.UPSTREAM_MAX_ATTEMPTS} = ${num(reads * u.UPSTREAM_MAX_ATTEMPTS)}`,
    ),
  };
}

export interface LedgerWorstCase {
  backoff: BackoffSettings;
  /** TX_BLOCKHASH_LIFETIME_MS + TX_GIVE_UP_GRACE_MS. */
  giveUpAfterSignMs: number;
  signing: { delayCeilingMs: number; calls: Bound; httpAttempts: Bound; time: Bound };
  submissions: { calls: Bound; httpAttempts: Bound; time: Bound; timeWithRetryAfter: Bound };
  afterFinal: {
    /** Largest backoff ceiling between two runs of a failing handler (it grows with its runs). */
    delayCeilingMs: number;
    /** The mirror refresh (`listings.refresh-event`): REFRESH_EVENT_MAX_ATTEMPTS runs. */
    refreshRuns: Bound;
    /** Its waits between runs, first run to give-up (the passes' own time comes on top). */
    refreshWaits: Bound;
    /** A handler registered without a limit (checkout's order wake-up). */
    unlimitedRuns: Bound;
  };
}

/** Per ledger transaction: the tracker's repeats of an unknown signing, its re-sends until final or give-up. */
export function ledgerWorstCase(config: RetriesConfig): LedgerWorstCase {
  const { transactions: t, upstream: u } = config;
  const backoff = txBackoffSettings(t);
  const interval = t.TX_TRACKER_INTERVAL_MS;
  const attempts = u.UPSTREAM_MAX_ATTEMPTS;
  const sign = upstreamCallWorstCase(u, 'sign').time.value ?? 0;
  const submit = upstreamCallWorstCase(u, 'submit').time.value ?? 0;
  // Each tracker repeat raises sign_attempts, so the ceiling doubles up to the maximum; the worst case in calls
  // is every draw at 0 (full jitter), i.e. one repeat per tracker interval.
  const signCeiling = backoffCeiling(backoff, 30);
  const window = t.TX_SIGN_RESOLVE_WINDOW_MS;
  const signCalls = Math.floor(window / interval) + 1;
  const signTime = window + sign;
  const giveUpAfterSignMs = t.TX_BLOCKHASH_LIFETIME_MS + t.TX_GIVE_UP_GRACE_MS;
  const sends = 1 + Math.floor(giveUpAfterSignMs / interval) + 1;
  const lastDelay = worstRetryDelay(backoff, 30, false);
  const sendTime = giveUpAfterSignMs + 2 * submit + lastDelay + interval;
  // After run k fails the next waits up to the ceiling after k − 1 failures (delayFor), then one tracker pass.
  const refreshCeilings = Array.from({ length: REFRESH_EVENT_MAX_ATTEMPTS - 1 }, (_, k) =>
    backoffCeiling(backoff, k),
  );
  const refreshWaits =
    refreshCeilings.reduce((a, b) => a + b, 0) + (REFRESH_EVENT_MAX_ATTEMPTS - 1) * interval;
  return {
    backoff,
    giveUpAfterSignMs,
    signing: {
      delayCeilingMs: signCeiling,
      calls: finite(signCalls, `floor(${num(window)} / ${num(interval)}) + 1 = ${num(signCalls)}`),
      httpAttempts: finite(
        signCalls * attempts,
        `${num(signCalls)} × ${attempts} = ${num(signCalls * attempts)}`,
      ),
      time: finite(
        signTime,
        `window ${num(window)} + last call ${num(sign)} = ${num(signTime)} ms (then left in \`signing\`)`,
      ),
    },
    submissions: {
      calls: finite(
        sends,
        `1 first + floor(${num(giveUpAfterSignMs)} / ${num(interval)}) + 1 after give-up time = ${num(sends)}`,
      ),
      httpAttempts: finite(sends * attempts, `${num(sends)} × ${attempts} = ${num(sends * attempts)}`),
      time: finite(
        sendTime,
        `${num(t.TX_BLOCKHASH_LIFETIME_MS)} + ${num(t.TX_GIVE_UP_GRACE_MS)} + 2 × ${num(submit)} + ` +
          `${num(lastDelay)} + ${num(interval)} = ${num(sendTime)} ms`,
      ),
      timeWithRetryAfter: finite(
        sendTime - lastDelay + Math.max(lastDelay, backoff.retryAfterCapMs),
        `as above with the last wait the capped Retry-After ${num(backoff.retryAfterCapMs)} ms = ` +
          `${num(sendTime - lastDelay + Math.max(lastDelay, backoff.retryAfterCapMs))} ms`,
      ),
    },
    afterFinal: {
      delayCeilingMs: backoffCeiling(backoff, 30),
      refreshRuns: finite(
        REFRESH_EVENT_MAX_ATTEMPTS,
        `REFRESH_EVENT_MAX_ATTEMPTS = ${REFRESH_EVENT_MAX_ATTEMPTS}, then given up (history \`on_final\` "gave up after N tries")`,
      ),
      refreshWaits: finite(
        refreshWaits,
        `${refreshCeilings.map(num).join(' + ')} + ${REFRESH_EVENT_MAX_ATTEMPTS - 1} × ${num(interval)} = ${num(refreshWaits)} ms`,
      ),
      unlimitedRuns: unbounded(
        `the handler throws: its backoff ceiling doubles per run up to ${num(backoffCeiling(backoff, 30))} ms`,
      ),
    },
  };
}

export type SyncPassResource = 'events' | 'listings';

export interface SyncPassWorstCase {
  resource: SyncPassResource;
  items: number;
  pages: number;
  calls: Bound;
  httpAttempts: Bound;
  /** Upstream time of the pass (page calls; database writes not included). */
  time: Bound;
  /** The only bound the code sets on a pass: DEFAULT_MAX_PAGES pages, each one call. */
  capTime: Bound;
  capHttpAttempts: Bound;
  /** Longest pause between two scheduled passes of the resource (after the previous ended). */
  gapMs: Bound;
  leaseRenewMs: number;
}

/** Per sync pass of `items` items (full pages; empty pages in between only add pages). */
export function syncPassWorstCase(
  config: RetriesConfig,
  resource: SyncPassResource,
  items: number,
): SyncPassWorstCase {
  const { sync: s, upstream: u } = config;
  const pages = Math.max(1, Math.ceil(items / s.SYNC_PAGE_SIZE));
  const attempts = u.UPSTREAM_MAX_ATTEMPTS;
  const call = upstreamCallWorstCase(u, 'read').time.value ?? 0;
  const interval = resource === 'events' ? s.SYNC_EVENTS_INTERVAL_MS : s.SYNC_LISTINGS_INTERVAL_MS;
  const gap = interval + s.SYNC_JITTER_MS;
  return {
    resource,
    items,
    pages,
    calls: finite(pages, `ceil(${num(items)} / ${num(s.SYNC_PAGE_SIZE)}) = ${num(pages)}`),
    httpAttempts: finite(
      pages * attempts,
      `${num(pages)} × (1 + ${attempts - 1} retries) = ${num(pages * attempts)}`,
    ),
    time: finite(pages * call, `${num(pages)} × ${num(call)} = ${num(pages * call)} ms`),
    capTime: finite(
      DEFAULT_MAX_PAGES * call,
      `DEFAULT_MAX_PAGES ${num(DEFAULT_MAX_PAGES)} × ${num(call)} = ${num(DEFAULT_MAX_PAGES * call)} ms`,
    ),
    capHttpAttempts: finite(
      DEFAULT_MAX_PAGES * attempts,
      `${num(DEFAULT_MAX_PAGES)} × ${attempts} = ${num(DEFAULT_MAX_PAGES * attempts)}`,
    ),
    gapMs: finite(gap, `${num(interval)} + jitter ${num(s.SYNC_JITTER_MS)} = ${num(gap)} ms`),
    leaseRenewMs: Math.max(100, Math.floor(s.SYNC_LEASE_TTL_MS / 3)),
  };
}

/**
 * Every finite worst-case time, by name (ms): what a delay, timeout, lease or interval setting can only raise.
 * `items`: catalog size of the sync figures (default: the sandbox's default catalog).
 */
export function finiteWorstCaseTimes(config: RetriesConfig): Record<string, number> {
  const times: Record<string, number> = {};
  const put = (name: string, bound: Bound) => {
    if (bound.value !== null) times[name] = bound.value;
  };
  for (const kind of ['read', 'sign', 'submit'] as const)
    put(`upstream ${kind} call`, upstreamCallWorstCase(config.upstream, kind).time);
  const order = orderWorstCase(config);
  put('order revalidation per attempt', order.revalidationTimePerAttempt);
  put('order retry delay', finite(order.worstRetryDelayMs, ''));
  const ledger = ledgerWorstCase(config);
  put('ledger unknown signing', ledger.signing.time);
  put('ledger until give-up', ledger.submissions.time);
  put('ledger mirror refresh waits', ledger.afterFinal.refreshWaits);
  for (const resource of ['events', 'listings'] as const) {
    const pass = syncPassWorstCase(config, resource, sandboxItems(config, resource));
    put(`sync ${resource} pass`, pass.time);
    put(`sync ${resource} cap`, pass.capTime);
    put(`sync ${resource} gap`, pass.gapMs);
  }
  put('webhook delivery until failed', webhookDeliveryWorstCase(config).time);
  return times;
}

/** The sandbox's default catalog size: the worked example of the sync figures. */
function sandboxItems(config: RetriesConfig, resource: SyncPassResource): number {
  return resource === 'events' ? config.sandbox.SANDBOX_EVENTS : config.sandbox.SANDBOX_LISTINGS;
}

/** One webhook delivery, from its append (or a manual retry) to `failed`, against a receiver that never answers. */
export interface WebhookDeliveryWorstCase {
  tries: number;
  /** Sum of the jittered schedule's ceilings, the timeout of every try and a worker interval before each. */
  time: Bound;
}

export function webhookDeliveryWorstCase(config: RetriesConfig): WebhookDeliveryWorstCase {
  const w = config.webhooks;
  const tries = MAX_DELIVERY_ATTEMPTS;
  const waits = RETRY_SCHEDULE_MS.reduce((sum, _delay, i) => sum + retryCeilingMs(i + 1), 0);
  const perTry = w.WEBHOOKS_WORKER_INTERVAL_MS + w.WEBHOOKS_DELIVERY_TIMEOUT_MS;
  return {
    tries,
    time: finite(
      waits + tries * perTry,
      `schedule with jitter ${num(waits)} + ${tries} × (worker interval ${num(w.WEBHOOKS_WORKER_INTERVAL_MS)} + timeout ${num(w.WEBHOOKS_DELIVERY_TIMEOUT_MS)})`,
    ),
  };
}

// ---- rendering ------------------------------------------------------------------------------------------------

/** 1234567 → "1,234,567" (no locale: the output must not depend on the machine). */
export function num(n: number): string {
  const [whole, fraction] = String(n).split('.');
  const grouped = (whole ?? '').replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return fraction === undefined ? grouped : `${grouped}.${fraction}`;
}

/** Calls per minute of a loop whose tries are at least `spacingMs` apart. */
function perMinute(spacingMs: number): number {
  return Math.floor(60_000 / spacingMs);
}

function round(x: number): string {
  return String(Math.round(x * 10) / 10);
}

/** Markdown inline code. */
function code(text: string): string {
  return `\`${text}\``;
}

/** A duration for people: "500 ms", "2.5 s", "4 min", "1 h", "34.7 days". */
export function human(ms: number): string {
  if (ms < 1000) return `${num(ms)} ms`;
  if (ms < 120_000) return `${round(ms / 1000)} s`;
  if (ms < 7_200_000) return `${round(ms / 60_000)} min`;
  if (ms < 172_800_000) return `${round(ms / 3_600_000)} h`;
  return `${round(ms / 86_400_000)} days`;
}

function valueText(setting: RetrySetting): string {
  if (typeof setting.value === 'boolean') return String(setting.value);
  switch (setting.unit) {
    case 'ms':
      return setting.value >= 1000
        ? `${num(setting.value)} ms (${human(setting.value)})`
        : `${num(setting.value)} ms`;
    case 's':
      return `${num(setting.value)} s`;
    case 'rps':
      return `${num(setting.value)}/s`;
    case 'factor':
    case 'count':
    case 'flag':
      break;
  }
  return num(setting.value);
}

function boundText(bound: Bound, unit: 'ms' | 'count'): string {
  if (bound.value === null) return `**${bound.arithmetic}**`;
  const figure = unit === 'ms' ? `**${human(bound.value)}**` : `**${num(bound.value)}**`;
  return `${figure}: ${bound.arithmetic}`;
}

/** A markdown table, padded as prettier pads it (so `npm run format` leaves the file alone). */
function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(3, h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) => `| ${cells.map((cell, i) => cell.padEnd(widths[i] ?? 3)).join(' | ')} |`;
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

const MODULE_ORDER: RetryModule[] = [
  'upstream',
  'checkout',
  'transactions',
  'catalog-sync',
  'webhooks',
  'service',
  'sandbox',
];

/** The markdown of docs/RETRIES.md for `config` (the committed file is rendered from the defaults). */
export function renderRetriesDoc(config: RetriesConfig = defaultRetriesConfig()): string {
  const catalog = retriesCatalog(config);
  const { checkout: c, transactions: t, upstream: u, sync: s } = config;
  const out: string[] = [];
  const para = (...lines: string[]) => out.push(lines.join('\n'), '');

  para('# Retries, leases and polls');
  para(
    '<!-- Generated by `npm run docs:retries` from src/retries.catalog.ts; do not edit by hand. -->',
    '<!-- src/retries.catalog.spec.ts fails when this file and the code disagree. -->',
  );
  para(
    'What is retried, how often, and the worst case: every retry, lease, poll, interval, timeout and give-up',
    'setting of the service, its default, and the worst-case time and upstream call count per order, per ledger',
    'transaction and per sync pass, computed from those defaults.',
  );

  para('## How to read');
  para(
    '- **Default** is the value with the variable unset (read from its config class); a name that is not a',
    '  variable is a constant in the code (the "where" column names its file).',
    '- **Calls** are client method calls (one logical upstream request); each makes up to',
    `  ${code('UPSTREAM_MAX_ATTEMPTS')} (${u.UPSTREAM_MAX_ATTEMPTS}) **HTTP attempts** within ${code('UPSTREAM_DEADLINE_MS')} (${human(u.UPSTREAM_DEADLINE_MS)}).`,
    '- **Worst case** is an upper bound that holds whatever the upstream answers, absent a crash, with a free',
    '  worker slot (a due item is claimed within one worker interval). Counts are largest when every jittered delay',
    '  draws 0 (tries are then one worker interval apart); times are largest when every delay draws its ceiling or',
    '  the capped Retry-After.',
    '- **Unbounded while …** means the code sets no limit: the loop goes on as long as the condition holds. These',
    '  are listed again under "Unbounded loops" at the end.',
  );

  para('## Settings');
  for (const module of MODULE_ORDER) {
    const rows = catalog
      .filter((setting) => setting.module === module)
      .map((setting) => [code(setting.name), valueText(setting), setting.bounds, setting.where]);
    para(`### ${MODULE_TITLES[module]}`);
    para(table(['setting', 'default', 'what it bounds', 'where'], rows));
  }

  const order = orderWorstCase(config);
  const ledger = ledgerWorstCase(config);
  para('## The one backoff policy');
  para(
    'Background work (orders, ledger transactions) retries with `backoffDelay` of src/durable-work/backoff.policy.ts:',
    'exponential with **full jitter**, the delay drawn uniformly from `0..min(max, base·2^failures)`, where',
    '`failures` counts the failed tries before this one (0 at the first failure); a Retry-After the other side asked',
    "for is honoured up to the queue's cap: `delay = max(jitter, min(Retry-After, cap))`. The worst-case delay of the",
    '`n`-th failure is therefore the ceiling `min(max, base·2^(n−1))`, or the capped Retry-After when larger.',
  );
  const ceilingsRow = (settings: BackoffSettings) =>
    [1, 2, 3, 4, 5, 6].map((n) => num(backoffCeiling(settings, n - 1)));
  para(
    table(
      ['queue', 'base', 'max', 'Retry-After cap', 'ceilings of failures 1..6 (ms)'],
      [
        [
          'orders (checkout)',
          code('CHECKOUT_RETRY_BASE_DELAY_MS') + ` ${num(order.backoff.baseMs)}`,
          code('CHECKOUT_RETRY_MAX_DELAY_MS') + ` ${num(order.backoff.maxMs)}`,
          `4 × max = ${num(order.backoff.retryAfterCapMs)}`,
          ceilingsRow(order.backoff).join(', '),
        ],
        [
          'ledger transactions',
          code('TX_RESUBMIT_BASE_DELAY_MS') + ` ${num(ledger.backoff.baseMs)}`,
          code('TX_RESUBMIT_MAX_DELAY_MS') + ` ${num(ledger.backoff.maxMs)}`,
          `4 × max = ${num(ledger.backoff.retryAfterCapMs)}`,
          ceilingsRow(ledger.backoff).join(', '),
        ],
      ],
    ),
  );
  para(
    `An order's failure count (\`step_failures\`) starts again at 0 after every committed step. Inside one upstream`,
    'call the client has its own full-jitter backoff between attempts (src/upstream/http/backoff.ts):',
    `\`min(UPSTREAM_BACKOFF_MAX_MS, UPSTREAM_BACKOFF_BASE_MS·2^(attempt−1))\` = ` +
      `${Array.from({ length: Math.max(0, u.UPSTREAM_MAX_ATTEMPTS - 1) }, (_, i) => num(upstreamBackoffCeiling(u, i + 1))).join(', ')} ms` +
      ' before attempts 2.., or exactly the Retry-After of a 429 up to `UPSTREAM_RETRY_AFTER_CAP_MS`.',
  );

  para('## Worst case per upstream call');
  para(
    table(
      ['call', 'HTTP attempts', 'attempt timeout', 'worst time'],
      (['read', 'sign', 'submit'] as const).map((kind) => {
        const call = upstreamCallWorstCase(u, kind);
        return [kind, num(call.attempts), `${num(call.attemptTimeoutMs)} ms`, boundText(call.time, 'ms')];
      }),
    ),
  );
  para(
    'Each wait before a retry is the backoff ceiling or a Retry-After up to the cap; the deadline cuts the sum. A',
    "key check (`verifyKey`) makes at most 2 attempts within min(deadline, 2 × read timeout). The rate limiter's",
    'wait counts against the deadline; a wait that cannot fit ends the call `RATE_LIMITED`.',
  );

  para('## Worst case per order');
  para(
    `From \`POST /v1/orders\` to a final state, absent a crash; ${c.CHECKOUT_MAX_ATTEMPTS} attempts`,
    `(${code('CHECKOUT_MAX_ATTEMPTS')}), each: revalidate → sign and first submission → track → (expired) lookup.`,
  );
  para(
    table(
      ['what', 'worst case'],
      [
        ['time, POST to final', boundText(order.time, 'ms')],
        ['revalidation time per attempt', boundText(order.revalidationTimePerAttempt, 'ms')],
        ['revalidation walks per attempt', boundText(order.revalidationWalksPerAttempt, 'count')],
        ['revalidation reads (calls)', boundText(order.calls.revalidationReads, 'count')],
        ['revalidation reads (HTTP attempts)', boundText(order.revalidationHttpAttempts, 'count')],
        ['signing calls', boundText(order.calls.signing, 'count')],
        ['submissions / status re-sends', boundText(order.calls.submissions, 'count')],
        ['purchase-status lookups', boundText(order.calls.purchaseStatus, 'count')],
        ['mirror refresh passes', boundText(order.calls.mirrorRefreshPasses, 'count')],
      ],
    ),
  );
  para(
    `- Worst delay of a failed step: ${num(order.worstRetryDelayMs)} ms (the capped Retry-After; without one the`,
    `  ceiling ${num(order.backoff.maxMs)} ms), then up to one worker interval (${num(order.claimLatencyMs)} ms) until a`,
    '  worker claims the order.',
    `- One revalidation try lasts at most ${num(order.revalidationTryMs)} ms: the live walk is cut at`,
    `  ${code('CHECKOUT_REVALIDATE_TIMEOUT_MS')}, but a resumed attempt reads the protocol config without that signal`,
    '  (a whole upstream call).',
    `- Fastest pace of the unbounded loops, per order: signing ${order.perMinute.signing}/min,`,
    `  status re-sends ${order.perMinute.submissions}/min (plus the ledger tracker's own looks), purchase-status`,
    `  lookups ${order.perMinute.purchaseStatus}/min; each call up to ${u.UPSTREAM_MAX_ATTEMPTS} HTTP attempts.`,
    `- In-process tracking hands the order back every ${num(order.trackHandBackMs)} ms`,
    `  (max(${code('CHECKOUT_TRACK_POLL_MS')}, ${code('CHECKOUT_LEASE_MS')} / 2)), due at once; ${code('MAX_STEPS_PER_DRIVE')}`,
    `  (${MAX_STEPS_PER_DRIVE}) and ${code('MAX_POLLS_PER_DRIVE')} (${num(MAX_POLLS_PER_DRIVE)}) end a drive, never an order.`,
    "- The ledger's give-up does not end an order's tracking: each in-process re-send re-opens a stopped tracking.",
  );

  para('## Worst case per ledger transaction');
  para(
    `The tracker claims due rows every ${code('TX_TRACKER_INTERVAL_MS')} (${num(t.TX_TRACKER_INTERVAL_MS)} ms), so one`,
    "row's tries are at least that far apart. It gives up on a submitted transaction at its first look after",
    `signing + ${code('TX_BLOCKHASH_LIFETIME_MS')} + ${code('TX_GIVE_UP_GRACE_MS')} = ${num(ledger.giveUpAfterSignMs)} ms, after one more send.`,
  );
  para(
    table(
      ['what', 'worst case'],
      [
        ['unknown signing: repeats (calls)', boundText(ledger.signing.calls, 'count')],
        ['unknown signing: HTTP attempts', boundText(ledger.signing.httpAttempts, 'count')],
        ['unknown signing: time', boundText(ledger.signing.time, 'ms')],
        ['submissions until final or give-up', boundText(ledger.submissions.calls, 'count')],
        ['submissions: HTTP attempts', boundText(ledger.submissions.httpAttempts, 'count')],
        ['signing to give-up, no Retry-After', boundText(ledger.submissions.time, 'ms')],
        ['signing to give-up, with Retry-After', boundText(ledger.submissions.timeWithRetryAfter, 'ms')],
        ['after-final mirror refresh: runs', boundText(ledger.afterFinal.refreshRuns, 'count')],
        ['after-final mirror refresh: waits', boundText(ledger.afterFinal.refreshWaits, 'ms')],
        ['after-final handler without a limit: runs', boundText(ledger.afterFinal.unlimitedRuns, 'count')],
      ],
    ),
  );
  para(
    `- An unknown signing is repeated after a delay drawn from 0..ceiling (+ one tracker interval); each repeat`,
    `  raises \`sign_attempts\`, so the ceiling doubles up to ${num(ledger.signing.delayCeilingMs)} ms. The call count above`,
    '  is the worst case of full jitter: every draw 0.',
    `- ${code('TX_SIGN_RESOLVE_WINDOW_MS')} is counted from the row's creation; an older unknown signing is no longer`,
    "  claimed by the tracker (a caller's retry with the same key still resumes it).",
  );

  para('## Worst case per sync pass');
  const passes = (['events', 'listings'] as const).map((resource) =>
    syncPassWorstCase(config, resource, sandboxItems(config, resource)),
  );
  para(
    `A pass walks every page (${code('SYNC_PAGE_SIZE')} ${num(s.SYNC_PAGE_SIZE)} items each) until \`next_cursor\` is null; each`,
    'page is one read call (retried inside the client); a page that still fails fails the pass, and the next scheduled',
    'pass starts again from page 1. Calls per pass = pages; HTTP attempts = pages × (1 + retries). Example: the',
    `sandbox's default catalog (${code('SANDBOX_EVENTS')} ${num(config.sandbox.SANDBOX_EVENTS)}, ${code('SANDBOX_LISTINGS')} ${num(config.sandbox.SANDBOX_LISTINGS)}).`,
  );
  para(
    table(
      ['pass', 'page calls', 'HTTP attempts', 'upstream time', 'next pass within'],
      passes.map((p) => [
        `${p.resource} (${num(p.items)} items)`,
        boundText(p.calls, 'count'),
        boundText(p.httpAttempts, 'count'),
        boundText(p.time, 'ms'),
        boundText(p.gapMs, 'ms'),
      ]),
    ),
  );
  const cap = passes[0];
  if (cap)
    para(
      '- **A pass has no time limit of its own: it is unbounded while its lease renews** (every',
      `  ${num(cap.leaseRenewMs)} ms, a third of ${code('SYNC_LEASE_TTL_MS')}). The only cap is the walk's page limit:`,
      `  ${boundText(cap.capTime, 'ms')}; ${boundText(cap.capHttpAttempts, 'count')} HTTP attempts. Database writes`,
      '  come on top.',
      `- A holder that stops renewing loses the pass after at most ${code('SYNC_LEASE_TTL_MS')} (${num(s.SYNC_LEASE_TTL_MS)} ms): another`,
      '  replica takes the lease over and the abandoned pass is marked failed.',
      `- After a confirmed order the event's listings are refreshed by one such pass, at most ${MAX_REFRESH_TRIES} times.`,
    );

  para('## Worst case per webhook delivery');
  const hook = webhookDeliveryWorstCase(config);
  const w = config.webhooks;
  para(
    `A delivery (one event to one endpoint) is tried at most ${hook.tries} times: at once, then after each delay of the`,
    `schedule (${RETRY_SCHEDULE_MS.map((ms) => human(ms)).join(', ')}, each ± ${RETRY_JITTER * 100} %), then it is`,
    `\`failed\` (src/webhooks/delivery.schedule.ts). Each try is one POST bounded by ${code('WEBHOOKS_DELIVERY_TIMEOUT_MS')}`,
    `(${num(w.WEBHOOKS_DELIVERY_TIMEOUT_MS)} ms); anything but a 2xx, redirects included, is a failed try.`,
  );
  para(
    table(
      ['what', 'worst case'],
      [
        ['tries per delivery', `**${hook.tries}** (a manual retry adds one)`],
        ['append to `failed`', boundText(hook.time, 'ms')],
      ],
    ),
  );
  para(
    `- A sender killed mid-send holds the delivery until ${code('WEBHOOKS_LEASE_MS')} (${num(w.WEBHOOKS_LEASE_MS)} ms) runs`,
    '  out; another replica then sends it again with the same `webhook-id` (the crashed try counts as one).',
    `- An endpoint whose tries all failed for ${code('WEBHOOKS_DISABLE_AFTER_HOURS')} (${w.WEBHOOKS_DISABLE_AFTER_HOURS} h) is`,
    '  disabled at its next failure; its pending deliveries then fail without a send.',
  );

  para('## Retry-After');
  para(
    `- **Inside an upstream call**: a 429's Retry-After (seconds or HTTP-date) is waited exactly, never less, when it`,
    `  is at most ${code('UPSTREAM_RETRY_AFTER_CAP_MS')} (${num(u.UPSTREAM_RETRY_AFTER_CAP_MS)} ms) and fits before the deadline; a longer one`,
    '  ends the call `RATE_LIMITED` carrying the wait. Every 429 halves the rate (floor',
    `  ${code('UPSTREAM_RATE_LIMIT_MIN_RPS')}) and pauses every call for min(Retry-After, cap), on every replica (the others`,
    `  at their next heartbeat); each quiet ${num(RATE_LIMIT_RECOVERY_INTERVAL_MS)} ms adds back ${RATE_LIMIT_RECOVERY_STEP * 100}% of ${code('UPSTREAM_RATE_LIMIT_RPS')}.`,
    `- **Orders**: a failed step waits max(jitter, min(Retry-After, ${num(order.backoff.retryAfterCapMs)} ms)); a 429`,
    '  without a Retry-After adds nothing to the jitter.',
    `- **Ledger transactions**: a failed re-send or signing waits max(jitter, min(Retry-After, ${num(ledger.backoff.retryAfterCapMs)} ms)).`,
    '- **Catalog sync**: none at pass level (the client honours it inside each page call).',
    `- **Our own answers**: 503 \`DATABASE_BUSY\` with Retry-After 1 s; a signing in flight under the same key 409 with`,
    `  the seconds left on its lease (at most ${code('TX_LEASE_MS')}); 429 of our rate limits, upstream \`RATE_LIMITED\``,
    `  passed on with the upstream's Retry-After, else ${DEFAULT_RETRY_AFTER_SECONDS} s.`,
  );

  para('## What is never retried');
  para(
    '- **By the upstream client**: any status but 500/502/503/504 and 429 (401, 403, 404, 409, other 4xx, 501, 505…);',
    "  an open circuit; a full concurrency queue; a response body it refuses (BAD_RESPONSE); the caller's",
    '  cancellation; a retry that cannot start at least 10 ms before the deadline. Signing and submission are',
    '  retried only as the same request: the same idempotency key, the same signed bytes.',
    '- **Orders**: a definite refusal of signing (4xx) fails the order `SIGNING_REJECTED` (409 "key holds another',
    '  request" goes to the purchase-status lookup instead); a refused submission (4xx) goes to the lookup, never',
    '  re-sent; `gone` / `price_changed` / `restricted` revalidations reject the order once the purchase status by the',
    "  attempt's key says nothing was bought (a purchase by it decides the order instead); a failing revalidation after",
    `  ${code('CHECKOUT_REVALIDATE_GIVE_UP_MS')} fails it; a new attempt only after the lookup says \`expired\` or`,
    `  "no purchase", at most ${code('CHECKOUT_MAX_ATTEMPTS')} attempts; the mirror refresh after ${MAX_REFRESH_TRIES} tries.`,
    '- **Ledger**: a definite signing refusal (`sign_rejected`, replayed to later retries); a refused submission',
    '  (`tracking_stopped: rejected`); a transaction past its give-up time (`gave_up`); an unknown signing older',
    `  than ${code('TX_SIGN_RESOLVE_WINDOW_MS')} (by the tracker); the after-final mirror refresh after`,
    `  ${REFRESH_EVENT_MAX_ATTEMPTS} runs (\`REFRESH_EVENT_MAX_ATTEMPTS\`; the next scheduled listings pass catches the mirror up).`,
    '- **Webhooks**: a delivery after its last scheduled try (`failed`; a manual retry sends it once more); a send the',
    '  SSRF guard refuses counts as a failed try; redirects are never followed; a `Retry-After` of a receiver is',
    '  not honoured (the schedule is fixed).',
    '- **Catalog sync**: a failed page within its pass (the next scheduled pass starts over); a walk past',
    `  ${num(DEFAULT_MAX_PAGES)} pages or with a repeated cursor (BAD_RESPONSE).`,
  );

  para('## Unbounded loops');
  para(
    'Loops the code does not bound in time. Each is on the money path where the outcome is unknown: only the',
    "upstream's answer may end it, because giving up could leave a purchase that landed marked failed. They retry",
    'with the same key or the same bytes (harmless), under the capped backoff above, and they are watched:',
    '`checkout_oldest_open_order_age_seconds` and `durable_work_oldest_due_age_seconds{queue}` grow while one runs.',
    '',
    '- Checkout signing (`OrderAttempt.sign`, `signAndSubmit`): a transient signing failure is retried with the same',
    '  key and no give-up (a definite 4xx fails the order).',
    '- Checkout tracking (`OrderTracker.track`): the order is re-sent and handed back every half lease for as long as',
    "  the upstream answers a non-final status or a transient error; the in-process send re-opens the ledger's",
    '  stopped tracking.',
    '- Checkout purchase-status lookup (`OrderSettlement.lookup`): retried while it fails or says pending / unknown.',
    "- Ledger after-final handler registered without a try limit (checkout's order wake-up, `TransactionsTrackerWork`):",
    '  retried while it throws, its backoff growing with `on_final_attempts`; its reconciliation of an order closed',
    '  while its purchase landed must not be dropped. A handler a replica has not registered is never claimed there.',
    '- Catalog sync pass: no time limit; it runs while its lease renews (`HeldLease`), capped only',
    `  by ${num(DEFAULT_MAX_PAGES)} pages (\`DEFAULT_MAX_PAGES\`).`,
  );
  return `${out.join('\n').trimEnd()}\n`;
}
