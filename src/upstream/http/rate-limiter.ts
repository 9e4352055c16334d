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

/**
 * Process-wide token bucket with an adaptive rate (contract part 7: on 429 honour Retry-After and lower
 * the request frequency). A 429 halves the rate (down to the floor) and, with Retry-After, pauses every
 * caller until then; each quiet recovery interval adds back a step of the maximum (additive increase,
 * multiplicative decrease).
 */
export class AdaptiveRateLimiter {
  private rate: number;
  private tokens: number;
  private refilledAt: number;
  private changedAt: number;
  private pausedUntil = 0;
  private readonly options: Required<RateLimiterOptions>;

  constructor(
    options: RateLimiterOptions,
    private readonly clock: UpstreamClock,
    private readonly onRateChange: (ratePerSecond: number) => void = () => undefined,
  ) {
    this.options = { recoveryIntervalMs: 5_000, recoveryStep: 0.1, ...options };
    this.rate = options.maxRatePerSecond;
    this.tokens = options.maxRatePerSecond;
    this.refilledAt = clock.now();
    this.changedAt = this.refilledAt;
  }

  get currentRate(): number {
    return this.rate;
  }

  /** Takes one token, waiting as needed; throws RateLimitWaitTooLong when the wait would pass `deadline`. */
  async acquire(deadline: number, signal?: AbortSignal): Promise<void> {
    for (let guard = 0; guard < 10_000; guard++) {
      const now = this.clock.now();
      this.refill(now);
      const wait = Math.max(
        this.pausedUntil - now,
        this.tokens >= 1 ? 0 : ((1 - this.tokens) / this.rate) * 1000,
      );
      if (wait <= 0) {
        this.tokens -= 1;
        return;
      }
      if (now + wait > deadline) throw new RateLimitWaitTooLong(Math.ceil(wait));
      await this.clock.sleep(Math.ceil(wait), signal);
    }
    throw new RateLimitWaitTooLong(0);
  }

  /** A 429 arrived: halve the rate, and when the upstream said how long, pause everyone that long. */
  onRateLimited(retryAfterMs: number | undefined): void {
    const now = this.clock.now();
    this.refill(now);
    this.setRate(Math.max(this.options.minRatePerSecond, this.rate / 2), now);
    this.tokens = Math.min(this.tokens, 0);
    if (retryAfterMs !== undefined) this.pausedUntil = Math.max(this.pausedUntil, now + retryAfterMs);
  }

  private refill(now: number): void {
    const elapsed = Math.max(0, now - this.refilledAt);
    this.refilledAt = now;
    if (
      this.rate < this.options.maxRatePerSecond &&
      now - this.changedAt >= this.options.recoveryIntervalMs
    ) {
      const steps = Math.floor((now - this.changedAt) / this.options.recoveryIntervalMs);
      const grown = this.rate + steps * this.options.recoveryStep * this.options.maxRatePerSecond;
      this.setRate(Math.min(this.options.maxRatePerSecond, grown), now);
    }
    this.tokens = Math.min(Math.max(1, this.rate), this.tokens + (elapsed / 1000) * this.rate);
  }

  private setRate(rate: number, now: number): void {
    this.changedAt = now;
    if (rate !== this.rate) {
      this.rate = rate;
      this.onRateChange(rate);
    }
  }
}
