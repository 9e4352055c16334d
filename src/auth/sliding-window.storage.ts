import { Inject, Injectable, Module, Optional, type OnApplicationShutdown } from '@nestjs/common';
import type { ThrottlerStorage } from '@nestjs/throttler';

/** What a store answers per request (the package does not export the interface by name). */
export type ThrottlerStorageRecord = Awaited<ReturnType<ThrottlerStorage['increment']>>;

/** One key's window: the expiry times of its counted hits, oldest first, in a ring buffer. */
interface Window {
  expiries: Float64Array;
  head: number;
  size: number;
  /** Reset instant reported as X-RateLimit-Reset: restarts one window length after it passes. */
  resetAt: number;
}

/** The store's clock (milliseconds); Date.now unless a test provides another. */
export const RATE_LIMIT_CLOCK = Symbol('RATE_LIMIT_CLOCK');

const INITIAL_CAPACITY = 16;
const SWEEP_EVERY_MS = 60_000;

/**
 * The rate limiter's in-memory store (per replica): an exact sliding window — a request is counted
 * when fewer than `limit` counted requests of its key happened in the last `ttl` ms; a refused request
 * is not counted (the guard runs with blockDuration 0). Same answers as @nestjs/throttler's own
 * ThrottlerStorageService (which the auth e2e tests were written against): totalHits, the X-RateLimit
 * reset, and Retry-After = time until the oldest counted hit leaves the window.
 *
 * The difference is the cost: the stock store filters an array of every hit of the window and takes
 * `Math.min(...hits)` on each request (O(hits in window), ~5 % of a cached read answer's CPU at a few
 * thousand requests per second). Here hits are kept in arrival order in a ring buffer of expiry times,
 * so expired ones leave from the head and the oldest is the head: amortised O(1) per request, memory
 * 8 bytes per counted hit (at most `limit` per key), grown on demand.
 */
@Injectable()
export class SlidingWindowThrottlerStorage implements ThrottlerStorage, OnApplicationShutdown {
  private readonly windows = new Map<string, Window>();
  private sweepTimer: NodeJS.Timeout | undefined;

  constructor(@Optional() @Inject(RATE_LIMIT_CLOCK) private readonly clock: () => number = Date.now) {}

  get keys(): number {
    return this.windows.size;
  }

  increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    return Promise.resolve(
      this.hit(throttlerName === 'default' ? key : `${throttlerName}|${key}`, ttl, limit),
    );
  }

  /** Counts one request of `key` unless its window is full; synchronous. */
  hit(key: string, ttl: number, limit: number): ThrottlerStorageRecord {
    const now = this.clock();
    let window = this.windows.get(key);
    if (!window) {
      window = {
        expiries: new Float64Array(Math.max(1, Math.min(limit, INITIAL_CAPACITY))),
        head: 0,
        size: 0,
        resetAt: now + ttl,
      };
      this.windows.set(key, window);
      this.startSweep();
    }
    dropExpired(window, now);
    if (window.resetAt <= now) window.resetAt = now + ttl;
    const timeToExpire = Math.ceil((window.resetAt - now) / 1000);
    if (window.size >= limit) {
      const oldest = window.size > 0 ? window.expiries[window.head] : window.resetAt;
      return {
        totalHits: window.size + 1,
        timeToExpire,
        isBlocked: true,
        timeToBlockExpire: Math.ceil((oldest - now) / 1000),
      };
    }
    push(window, now + ttl, limit);
    return { totalHits: window.size, timeToExpire, isBlocked: false, timeToBlockExpire: 0 };
  }

  /**
   * Whether `key`'s window is full (another hit would be refused), counting nothing: seconds until its oldest
   * hit leaves the window, or 0 when there is room. The failed-authentication budget asks this before it
   * verifies a credential, and counts (hit) only the attempts that fail.
   */
  retryAfter(key: string, limit: number): number {
    const window = this.windows.get(key);
    if (!window) return 0;
    const now = this.clock();
    dropExpired(window, now);
    if (window.size < limit || window.size === 0) return 0;
    return Math.max(1, Math.ceil((window.expiries[window.head] - now) / 1000));
  }

  /** Forgets keys with no counted hit left and a passed reset (run every minute while keys exist). */
  sweep(now = this.clock()): void {
    for (const [key, window] of this.windows) {
      dropExpired(window, now);
      if (window.size === 0 && window.resetAt <= now) this.windows.delete(key);
    }
    if (this.windows.size === 0) this.stopSweep();
  }

  onApplicationShutdown(): void {
    this.stopSweep();
    this.windows.clear();
  }

  private startSweep(): void {
    if (this.sweepTimer) return;
    this.sweepTimer = setInterval(() => this.sweep(), SWEEP_EVERY_MS);
    this.sweepTimer.unref();
  }

  private stopSweep(): void {
    clearInterval(this.sweepTimer);
    this.sweepTimer = undefined;
  }
}

function dropExpired(window: Window, now: number): void {
  const capacity = window.expiries.length;
  while (window.size > 0 && window.expiries[window.head] <= now) {
    window.head = (window.head + 1) % capacity;
    window.size--;
  }
}

function push(window: Window, expiry: number, limit: number): void {
  let capacity = window.expiries.length;
  if (window.size === capacity) {
    const grown = new Float64Array(Math.max(window.size + 1, Math.min(limit, capacity * 2)));
    for (let i = 0; i < window.size; i++) grown[i] = window.expiries[(window.head + i) % capacity];
    window.expiries = grown;
    window.head = 0;
    capacity = grown.length;
  }
  window.expiries[(window.head + window.size) % capacity] = expiry;
  window.size++;
}

/**
 * The store as a provider, so the throttler's options take it by injection (AuthModule's
 * `ThrottlerModule.forRootAsync`) rather than building it inside their factory. Its only provider is the store:
 * the throttler module hands the same instance to every guard and to FailedAuthLimiter.
 */
@Module({ providers: [SlidingWindowThrottlerStorage], exports: [SlidingWindowThrottlerStorage] })
export class RateLimitStoreModule {}
