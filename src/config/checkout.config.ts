import { IsOptional, Matches } from 'class-validator';
import { ConfigValidationError, EnvBool, EnvInt, validateEnvClass } from './validate-env';
import { Retried } from './retry-description';

/**
 * Environment variables of the `checkout/` module (orders, the recovery worker, per-buyer limits).
 * Documented in `.env.example`; a unit test keeps both in step.
 */
export class CheckoutConfig {
  /** Attempts per order: a new attempt (new derived key, fresh revalidation) follows an `expired` one. */
  @EnvInt(1, 10)
  @Retried({
    unit: 'count',
    bounds: 'attempts per order (new key, fresh revalidation after an expired one)',
    where: 'checkout/order.settlement.ts',
  })
  CHECKOUT_MAX_ATTEMPTS = 3;

  /** Run the recovery worker on this replica (every replica normally runs it). */
  @EnvBool()
  CHECKOUT_WORKER_ENABLED = true;

  /** How often the worker looks for due orders (ms). */
  @EnvInt(10, 60_000)
  @Retried({
    unit: 'ms',
    bounds: 'pause between recovery-worker passes: the latency of every retry after its delay',
    where: 'checkout/ (worker loop)',
  })
  CHECKOUT_WORKER_INTERVAL_MS = 500;

  /** Orders one worker pass claims at most. */
  @EnvInt(1, 1000)
  @Retried({
    unit: 'count',
    bounds: 'orders one worker drives at once; also the orders polled in process per replica',
    where: 'checkout/ (worker loop), order.tracker.ts',
  })
  CHECKOUT_WORKER_BATCH = 20;

  /**
   * Orders of one API client held by drives at once, across replicas, above which the recovery worker claims none
   * of its orders (the others' are claimed round-robin with it: a client's backlog never delays another's first).
   */
  @EnvInt(1, 10_000)
  CHECKOUT_CLIENT_MAX_IN_FLIGHT = 10;

  /** How long a driver holds an order (renewed at every committed step); a crashed driver's lease expires. */
  @EnvInt(100, 600_000)
  @Retried({
    unit: 'ms',
    bounds: "a drive's hold on an order (renewed by every commit); in-process tracking hands back after half",
    where: 'checkout/ (driver, tracker, repository)',
  })
  CHECKOUT_LEASE_MS = 30_000;

  /** First retry delay of a step whose upstream call failed; doubles up to CHECKOUT_RETRY_MAX_DELAY_MS. */
  @EnvInt(10, 600_000)
  @Retried({
    unit: 'ms',
    bounds: "backoff ceiling of a step's first failure (full jitter, doubles per failure)",
    where: 'checkout/order.committer.ts',
  })
  CHECKOUT_RETRY_BASE_DELAY_MS = 250;

  @EnvInt(10, 600_000)
  @Retried({
    unit: 'ms',
    bounds: "largest backoff ceiling of a step; Retry-After honoured up to the orders queue's cap (policy)",
    where: 'checkout/order.committer.ts',
  })
  CHECKOUT_RETRY_MAX_DELAY_MS = 5_000;

  /** How often a submitted order looks at its ledger transaction's status (ms). */
  @EnvInt(10, 60_000)
  @Retried({
    unit: 'ms',
    bounds: 'pause between status re-sends of a submitted order (in process)',
    where: 'checkout/order.tracker.ts',
  })
  CHECKOUT_TRACK_POLL_MS = 250;

  /** Bound of one live revalidation (walk of the event's active listings), ms. */
  @EnvInt(100, 120_000)
  @Retried({
    unit: 'ms',
    bounds: 'one live revalidation walk (pages and protocol config share one abort signal)',
    where: 'checkout/checkout.integrator.ts',
  })
  CHECKOUT_REVALIDATE_TIMEOUT_MS = 5_000;

  /** Longest an attempt keeps retrying its revalidation before the order fails (nothing was signed), ms. */
  @EnvInt(1_000, 3_600_000)
  @Retried({
    unit: 'ms',
    bounds:
      "an attempt's revalidation retries (age of the attempt), then the order fails UPSTREAM_UNAVAILABLE",
    where: 'checkout/order.attempt.ts',
  })
  CHECKOUT_REVALIDATE_GIVE_UP_MS = 120_000;

  /** Longest `GET /v1/orders/{id}?wait=` holds a request (ms). */
  @EnvInt(0, 60_000)
  @Retried({
    unit: 'ms',
    bounds: 'longest `GET /v1/orders/{id}?wait=` hold',
    where: 'checkout/checkout.service.ts',
  })
  CHECKOUT_MAX_WAIT_MS = 10_000;

  /** Open (non-final) orders one buyer may have per client; one more → 429 BUYER_OPEN_ORDERS_LIMIT. */
  @EnvInt(1, 10_000)
  CHECKOUT_MAX_OPEN_ORDERS_PER_BUYER = 5;

  /** Orders (open or confirmed) one buyer may place for one event per window → 409 BUYER_EVENT_LIMIT. */
  @EnvInt(1, 10_000)
  CHECKOUT_MAX_PURCHASES_PER_BUYER_PER_EVENT = 4;

  @EnvInt(1, 31_536_000)
  @Retried({
    unit: 's',
    bounds: 'window of the per-buyer per-event order limit (not a retry)',
    where: 'checkout/order.repository.ts',
  })
  CHECKOUT_PURCHASE_WINDOW_SECONDS = 86_400;

  /** accept_offer_v2 `integrator_authority`. Unset: the protocol config's `integrator_authority`. */
  @IsOptional()
  @Matches(/^\S{1,128}$/, { message: 'CHECKOUT_INTEGRATOR_AUTHORITY must be an address (1..128 non-space)' })
  CHECKOUT_INTEGRATOR_AUTHORITY?: string;

  /** accept_offer_v2 `integrator_identity`. Unset: the protocol config's `integrator_identity`. */
  @IsOptional()
  @Matches(/^\S{1,128}$/, { message: 'CHECKOUT_INTEGRATOR_IDENTITY must be an address (1..128 non-space)' })
  CHECKOUT_INTEGRATOR_IDENTITY?: string;

  /**
   * TEST ONLY: crash points (`name` or `name@n` = the n-th time, comma-separated) at which the process kills
   * itself with SIGKILL (src/checkout/crash-points.ts); `name:stop` stops it with SIGSTOP instead (a drive
   * frozen past its lease; SIGCONT resumes it there). Honoured only when NODE_ENV=test; refused in production.
   */
  @IsOptional()
  @Matches(/^[a-z_]+(@[1-9][0-9]{0,5})?(:stop)?(,[a-z_]+(@[1-9][0-9]{0,5})?(:stop)?)*$/, {
    message:
      'CHECKOUT_CRASH_POINTS must be a comma list of crash point names (name or name@n, optionally :stop)',
  })
  CHECKOUT_CRASH_POINTS?: string;

  /** Filled in by loadCheckoutConfig: NODE_ENV=test (the only environment honouring crash points). */
  crashPointsAllowed = false;
}

export function loadCheckoutConfig(env: NodeJS.ProcessEnv = process.env): CheckoutConfig {
  const config = validateEnvClass(CheckoutConfig, env);
  if (env.NODE_ENV === 'production' && config.CHECKOUT_CRASH_POINTS !== undefined)
    throw new ConfigValidationError(['CHECKOUT_CRASH_POINTS: test-only, refused when NODE_ENV=production']);
  config.crashPointsAllowed = env.NODE_ENV === 'test';
  return config;
}
