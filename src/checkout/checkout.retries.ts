import type { CheckoutConfig } from '../config/checkout.config';
import type { UpstreamConfig } from '../config/upstream.config';
import { constantSetting, describedSettings, type RetryDescription } from '../config/retry-description';
import { finite, num, unbounded, type Bound } from '../common/worst-case';
import type { BackoffSettings } from '../durable-work/backoff.policy';
import { worstRetryDelay } from '../durable-work/backoff.retries';
import { LISTING_SEARCH_MAX_PAGES } from '../upstream/listing-search';
import { MAX_STEPS_PER_DRIVE } from './checkout.driver';
import { WAIT_POLL_MS } from './checkout.service';
import { orderBackoffSettings } from './order.committer';
import { MAX_REFRESH_TRIES } from './order.settlement';
import { MAX_POLLS_PER_DRIVE } from './order.tracker';

/** Checkout's retry-like settings (docs/RETRIES.md), the variables with their values in `c`. */
export function checkoutRetries(c: CheckoutConfig): RetryDescription[] {
  return [
    ...describedSettings(c, 'checkout', 'checkout.config.ts'),
    constantSetting('checkout', 'MAX_STEPS_PER_DRIVE', MAX_STEPS_PER_DRIVE, {
      unit: 'count',
      bounds: 'steps of one drive, then the order is handed back due at once (bounds a drive, not an order)',
      where: 'src/checkout/checkout.driver.ts `MAX_STEPS_PER_DRIVE`',
    }),
    constantSetting('checkout', 'MAX_POLLS_PER_DRIVE', MAX_POLLS_PER_DRIVE, {
      unit: 'count',
      bounds: 'status polls of one drive (never reached: half a lease ends the drive first)',
      where: 'src/checkout/order.tracker.ts `MAX_POLLS_PER_DRIVE`',
    }),
    constantSetting('checkout', 'MAX_REFRESH_TRIES', MAX_REFRESH_TRIES, {
      unit: 'count',
      bounds: 'mirror refresh passes after `confirmed`, then abandoned (the order stays confirmed)',
      where: 'src/checkout/order.settlement.ts `MAX_REFRESH_TRIES`',
    }),
    constantSetting('checkout', 'LISTING_SEARCH_MAX_PAGES', LISTING_SEARCH_MAX_PAGES, {
      unit: 'count',
      bounds: 'pages of one revalidation walk (and of one `?fresh=true` walk)',
      where: 'src/upstream/listing-search.ts `LISTING_SEARCH_MAX_PAGES`',
    }),
    constantSetting('checkout', 'WAIT_POLL_MS', WAIT_POLL_MS, {
      unit: 'ms',
      bounds: 'database re-reads of a `?wait=` request',
      where: 'src/checkout/checkout.service.ts `WAIT_POLL_MS`',
    }),
  ];
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

/** Calls per minute of a loop whose tries are at least `spacingMs` apart. */
function perMinute(spacingMs: number): number {
  return Math.floor(60_000 / spacingMs);
}

/** Per order, from POST to a final state, absent a crash (a free worker slot assumed for claim latency). */
export function orderWorstCase(
  config: { checkout: CheckoutConfig; upstream: UpstreamConfig },
  options: OrderWorstCaseOptions = {},
): OrderWorstCase {
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
  const reads = attempts * walks * (pages + 1);
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
