import type { OwnThrottle, SharedThrottle } from '../upstream.types';
import type { UpstreamClock } from './clock';

export interface RateLimiterOptions {
  /** Normal (and maximum) rate, requests per second; also the bucket size (one second of burst). */
  maxRatePerSecond: number;
  /** Floor the rate never halves below. */
  minRatePerSecond: number;
  /** After this long without a 429 (default 5 s), the rate grows by `recoveryStep` of the maximum (0.1). */
  recoveryIntervalMs?: number;
  recoveryStep?: number;
}

export class RateLimitWaitTooLong extends Error {
  constructor(readonly waitMs: number) {
    super('rate limiter wait exceeds the deadline');
    this.name = 'RateLimitWaitTooLong';
  }
}

/** Default: after this long without a 429 the rate grows by RATE_LIMIT_RECOVERY_STEP of the maximum. */
export const RATE_LIMIT_RECOVERY_INTERVAL_MS = 5_000;
/** Default share of the maximum rate added back per quiet interval. */
export const RATE_LIMIT_RECOVERY_STEP = 0.1;

/** A shared throttle lowers this replica only when it is lower by more than rounding. */
const LOWER_BY_MORE_THAN = 1e-9;
/**
 * No window of one second holds more grants than the rate's whole requests. The bucket alone let a full second of
 * burst through on top of a second of refill: twice the budget within one second, as the upstream counts it
 * (test/e2e/live-catalog-429.e2e-spec.ts saw 11 requests in one second at a budget of 6). The window is 50 ms
 * longer than a second: a grant reaches the wire a little after it is made, and unevenly, so a window of exactly
 * one second here still let the upstream count one more (7 of 6) when an early request left late.
 */
const WINDOW_MS = 1050;

/**
 * Process-wide token bucket with an adaptive rate (contract part 7: on 429 honour Retry-After and lower
 * the request frequency), and a sliding window: no second ever holds more grants than the rate's whole requests
 * (the bucket's burst is spent within the second, never on top of the next second's refill). A 429 halves the rate (down to the floor) and, with Retry-After, pauses every
 * caller until then; each quiet recovery interval adds back a step of the maximum (additive increase,
 * multiplicative decrease).
 *
 * Across replicas (replicas/, docs/upstream-client.md): the budget is the whole service's, so each replica runs
 * at its `share` of it (maximum, floor and burst scaled; a lowered rate keeps its fraction of the maximum). Its
 * own 429s are told to `onThrottled` listeners, and another replica's 429 is applied with `applyShared`: the same
 * lowering and pause, recovering in step with that replica.
 */
export class AdaptiveRateLimiter {
  private rate: number;
  private tokens: number;
  private refilledAt: number;
  private changedAt: number;
  private pausedUntil = 0;
  private share = 1;
  /** Grant times within the last WINDOW_MS, oldest first (at most the rate's whole requests). */
  private readonly granted: number[] = [];
  private readonly options: Required<RateLimiterOptions>;
  private readonly listeners = new Set<(throttle: OwnThrottle) => void>();

  constructor(
    options: RateLimiterOptions,
    private readonly clock: UpstreamClock,
    private readonly onRateChange: (ratePerSecond: number) => void = () => undefined,
  ) {
    this.options = {
      recoveryIntervalMs: RATE_LIMIT_RECOVERY_INTERVAL_MS,
      recoveryStep: RATE_LIMIT_RECOVERY_STEP,
      ...options,
    };
    this.rate = options.maxRatePerSecond;
    this.tokens = options.maxRatePerSecond;
    this.refilledAt = clock.now();
    this.changedAt = this.refilledAt;
  }

  get currentRate(): number {
    return this.rate;
  }

  /** This replica's maximum: its share of the configured rate. */
  private get maxRate(): number {
    return this.options.maxRatePerSecond * this.share;
  }

  private get minRate(): number {
    return this.options.minRatePerSecond * this.share;
  }

  /** Takes one token, waiting as needed; throws RateLimitWaitTooLong when the wait would pass `deadline`. */
  async acquire(deadline: number, signal?: AbortSignal): Promise<void> {
    for (let guard = 0; guard < 10_000; guard++) {
      const now = this.clock.now();
      this.refill(now);
      const wait = Math.max(
        this.pausedUntil - now,
        this.tokens >= 1 ? 0 : ((1 - this.tokens) / this.rate) * 1000,
        this.windowWait(now),
      );
      if (wait <= 0) {
        this.tokens -= 1;
        this.granted.push(now);
        return;
      }
      if (now + wait > deadline) throw new RateLimitWaitTooLong(Math.ceil(wait));
      await this.clock.sleep(Math.ceil(wait), signal);
    }
    throw new RateLimitWaitTooLong(0);
  }

  /**
   * How long until one more grant keeps every window of WINDOW_MS at or below the rate (whole requests, at least
   * one): the time the oldest grant that would be one too many leaves the window.
   */
  private windowWait(now: number): number {
    while (this.granted.length > 0 && (this.granted[0] ?? now) <= now - WINDOW_MS) this.granted.shift();
    const cap = Math.max(1, Math.floor(this.rate + LOWER_BY_MORE_THAN));
    if (this.granted.length < cap) return 0;
    return (this.granted[this.granted.length - cap] ?? now) + WINDOW_MS - now;
  }

  /** A 429 arrived: halve the rate, and when the upstream said how long, pause everyone that long. */
  onRateLimited(retryAfterMs: number | undefined): void {
    const now = this.clock.now();
    this.refill(now);
    this.setRate(Math.max(this.minRate, this.rate / 2), now);
    this.tokens = Math.min(this.tokens, 0);
    if (retryAfterMs !== undefined) this.pausedUntil = Math.max(this.pausedUntil, now + retryAfterMs);
    const throttle: OwnThrottle = { factor: this.rate / this.maxRate, pauseMs: retryAfterMs };
    for (const listener of this.listeners) listener(throttle);
  }

  /** Listens to this limiter's own 429s (not to applied shared ones); returns the unsubscribe function. */
  onThrottled(listener: (throttle: OwnThrottle) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs at `share` (0 < share ≤ 1) of the configured rate: 1 / live replicas. Maximum, floor and burst scale;
   * a rate lowered after 429s keeps its fraction of the maximum and its recovery schedule.
   */
  setShare(share: number): void {
    if (!(share > 0 && share <= 1)) throw new RangeError(`rate share must be in (0, 1], got ${share}`);
    if (share === this.share) return;
    const now = this.clock.now();
    this.refill(now);
    const atMax = this.rate >= this.maxRate;
    const fraction = this.rate / this.maxRate;
    this.share = share;
    const rate = atMax
      ? this.maxRate
      : Math.min(this.maxRate, Math.max(this.minRate, fraction * this.maxRate));
    this.tokens = Math.min(this.tokens, Math.max(1, rate));
    if (rate !== this.rate) {
      this.rate = rate;
      this.onRateChange(rate);
    }
  }

  /**
   * Another replica's 429: lower to the fraction of the maximum it lowered to, plus the recovery steps it has
   * made since (`ageMs`), and pause for the rest of its Retry-After. Idempotent (the same row is read at every
   * heartbeat): it only ever lowers, and a replica already at or below that rate is left alone. Once lowered, the
   * recovery runs in step with that replica's (the phase of its age is kept).
   */
  applyShared(throttle: SharedThrottle): void {
    const now = this.clock.now();
    this.refill(now);
    const { recoveryIntervalMs, recoveryStep } = this.options;
    const age = Math.max(0, throttle.ageMs);
    const factor = Math.min(1, throttle.factor + Math.floor(age / recoveryIntervalMs) * recoveryStep);
    const target = Math.max(this.minRate, factor * this.maxRate);
    if (target < this.rate * (1 - LOWER_BY_MORE_THAN)) {
      this.setRate(target, now - (age % recoveryIntervalMs));
      this.tokens = Math.min(this.tokens, 0);
    }
    if (throttle.pauseMs > 0) this.pausedUntil = Math.max(this.pausedUntil, now + throttle.pauseMs);
  }

  private refill(now: number): void {
    const elapsed = Math.max(0, now - this.refilledAt);
    this.refilledAt = now;
    const { recoveryIntervalMs, recoveryStep } = this.options;
    if (this.rate < this.maxRate && now - this.changedAt >= recoveryIntervalMs) {
      const steps = Math.floor((now - this.changedAt) / recoveryIntervalMs);
      const grown = this.rate + steps * recoveryStep * this.maxRate;
      // The next step is due a whole interval after this one was, not after this call (no drift).
      this.setRate(Math.min(this.maxRate, grown), this.changedAt + steps * recoveryIntervalMs);
    }
    this.tokens = Math.min(Math.max(1, this.rate), this.tokens + (elapsed / 1000) * this.rate);
  }

  private setRate(rate: number, changedAt: number): void {
    this.changedAt = changedAt;
    if (rate !== this.rate) {
      this.rate = rate;
      this.onRateChange(rate);
    }
  }
}
