// One piece: the adaptive limiter and the grants it hands out (WireGrant). The token bucket, the AIMD rate, the
// Retry-After pause, the replica share and the window of wire times all decide one grant together, on the same
// state; WireGrant is the one way back into it (written or handed back). Split, each would need the others' fields.
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
 * How much later than our own write stamp the upstream may count a request, unevenly: the network and the
 * upstream's (or a test proxy's) event loop between our socket and its clock. The window is this much longer than
 * the upstream's second, so two requests we wrote one window apart never arrive within one of its seconds.
 */
const ARRIVAL_JITTER_MS = 50;
/**
 * No window of this length holds more requests *on the wire* than the rate's whole requests. Counted at the wire,
 * not at the grant: a grant reaches the wire late and unevenly (the bulkhead's queue, a connect, the request built
 * over microtasks), and a window of grant times let the freshness bench read 50.2 requests/s at a budget of 50,
 * and the upstream count 7 in a second at 6 (test/e2e/live-catalog-429.e2e-spec.ts).
 */
const WINDOW_MS = 1000 + ARRIVAL_JITTER_MS;

/** Never resolves; rejects with the signal's reason once it aborts. */
function rejectOnAbort(signal: AbortSignal): Promise<never> {
  return new Promise<never>((_resolve, reject) => {
    if (signal.aborted) reject(signal.reason);
    else signal.addEventListener('abort', () => reject(signal.reason), { once: true });
  });
}

/**
 * One grant of the limiter on its way to the wire. Exactly one of `written` / `unsent` counts (later calls are
 * no-ops): until then the grant counts as a request written *now*, at every moment it is pending.
 */
export class WireGrant {
  private open = true;

  constructor(private readonly settle: (written: boolean) => void) {}

  /**
   * The request was handed to the socket (node-adapter.ts, the request's 'finish'), or may have been by now (the
   * attempt ended after it was sent): from now on it counts in the window at this time. Any time at or after the
   * real write is safe; earlier would not be.
   */
  readonly written = (): void => {
    if (!this.open) return;
    this.open = false;
    this.settle(true);
  };

  /** The request never left (not sent, refused before the transport): its place is given back. */
  unsent(): void {
    if (!this.open) return;
    this.open = false;
    this.settle(false);
  }
}

/**
 * Process-wide token bucket with an adaptive rate (contract part 7: on 429 honour Retry-After and lower
 * the request frequency), and a sliding window of **wire** times: no WINDOW_MS ever holds more requests written to
 * the upstream than the rate's whole requests (the bucket's burst is spent within the window, never on top of the
 * next second's refill). A 429 halves the rate (down to the floor) and, with Retry-After, pauses every
 * caller until then; each quiet recovery interval adds back a step of the maximum (additive increase,
 * multiplicative decrease).
 *
 * Why the window is exact at the wire: a grant at `g` needs (written within (g − WINDOW_MS, g]) + (granted, not yet
 * written) + 1 ≤ cap. Take any window of wire times and, in it, the request granted last, at g ≤ its own write,
 * so g lies before the window's end: every other request in that window was granted before g and was then either
 * pending or already written at a time inside the window — after g − WINDOW_MS. So the window holds at most cap.
 * A grant whose request never leaves is handed back (`WireGrant.unsent`).
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
  /** Write times of granted requests, oldest first: a ring of `wireCount` entries from `wireHead`. */
  private wire: number[];
  private wireHead = 0;
  private wireCount = 0;
  /** Grants whose request is neither written nor handed back yet. */
  private pending = 0;
  /** Callers waiting for a pending grant to settle; created only when one waits. */
  private settled: { promise: Promise<void>; resolve: () => void } | undefined;
  private readonly settleGrant = (written: boolean): void => this.settle(written);
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
    this.wire = Array.from(
      { length: Math.max(1, Math.floor(options.maxRatePerSecond + LOWER_BY_MORE_THAN)) },
      () => 0,
    );
  }

  get currentRate(): number {
    return this.rate;
  }

  /** Grants not yet written nor handed back (tests, diagnostics). */
  get pendingGrants(): number {
    return this.pending;
  }

  /** This replica's maximum: its share of the configured rate. */
  private get maxRate(): number {
    return this.options.maxRatePerSecond * this.share;
  }

  private get minRate(): number {
    return this.options.minRatePerSecond * this.share;
  }

  /**
   * Takes one token, waiting as needed; throws RateLimitWaitTooLong when the wait would pass `deadline`. The grant
   * must be settled: `written` once the request is on the wire, `unsent` if it never leaves.
   */
  async acquire(deadline: number, signal?: AbortSignal): Promise<WireGrant> {
    for (let guard = 0; guard < 10_000; guard++) {
      const now = this.clock.now();
      this.refill(now);
      const windowWait = this.windowWait(now);
      // As many grants are pending as the window holds: only one of them settling makes room.
      const full = windowWait === Infinity;
      const wait = Math.max(
        this.pausedUntil - now,
        this.tokens >= 1 ? 0 : ((1 - this.tokens) / this.rate) * 1000,
        full ? 0 : windowWait,
      );
      if (wait <= 0 && !full) {
        this.tokens -= 1;
        this.pending += 1;
        return new WireGrant(this.settleGrant);
      }
      if (now + wait > deadline) throw new RateLimitWaitTooLong(Math.ceil(wait));
      if (!full) await this.clock.sleep(Math.ceil(wait), signal);
      else {
        // Only a pending grant settling makes room, at a time no timer can know; the deadline still holds.
        await this.nextSettle(deadline - now, signal);
        if (this.clock.now() >= deadline) throw new RateLimitWaitTooLong(0);
      }
    }
    throw new RateLimitWaitTooLong(0);
  }

  /**
   * How long until one more grant keeps every window of WINDOW_MS at or below the rate (whole requests, at least
   * one), pending grants counted as written now: the time the oldest write that would be one too many leaves the
   * window; Infinity when the pending grants alone fill it.
   */
  private windowWait(now: number): number {
    const wire = this.wire;
    while (this.wireCount > 0 && (wire[this.wireHead] ?? now) <= now - WINDOW_MS) {
      this.wireHead = (this.wireHead + 1) % wire.length;
      this.wireCount -= 1;
    }
    const room = Math.max(1, Math.floor(this.rate + LOWER_BY_MORE_THAN)) - this.pending - 1;
    if (room < 0) return Infinity;
    if (this.wireCount <= room) return 0;
    return (wire[(this.wireHead + this.wireCount - room - 1) % wire.length] ?? now) + WINDOW_MS - now;
  }

  private settle(written: boolean): void {
    this.pending -= 1;
    if (written) {
      if (this.wireCount === this.wire.length) this.growWire();
      this.wire[(this.wireHead + this.wireCount) % this.wire.length] = this.clock.now();
      this.wireCount += 1;
    }
    const settled = this.settled;
    if (settled !== undefined) {
      this.settled = undefined;
      settled.resolve();
    }
  }

  /** The ring holds at most the maximum's whole requests (see the class comment); doubled if that ever fails. */
  private growWire(): void {
    const grown = Array.from({ length: this.wire.length * 2 }, () => 0);
    for (let i = 0; i < this.wireCount; i++)
      grown[i] = this.wire[(this.wireHead + i) % this.wire.length] ?? 0;
    this.wire = grown;
    this.wireHead = 0;
  }

  /**
   * Resolves when any pending grant settles, or after `maxMs` (what is left before the caller's deadline); rejects
   * when `signal` aborts first. The deadline's timer exists only while a caller waits here and is cleared after.
   */
  private async nextSettle(maxMs: number, signal: AbortSignal | undefined): Promise<void> {
    let settled = this.settled;
    if (settled === undefined) {
      let resolve: (() => void) | undefined;
      const promise = new Promise<void>((r) => {
        resolve = r;
      });
      settled = { promise, resolve: () => resolve?.() };
      this.settled = settled;
    }
    if (maxMs === Infinity && signal === undefined) return settled.promise;
    const stop = new AbortController();
    const onAbort = (): void => stop.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    if (signal?.aborted) onAbort();
    const ended =
      maxMs === Infinity ? rejectOnAbort(stop.signal) : this.clock.sleep(Math.ceil(maxMs), stop.signal);
    ended.catch(() => undefined);
    try {
      await Promise.race([settled.promise, ended]);
    } finally {
      signal?.removeEventListener('abort', onAbort);
      stop.abort();
    }
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
