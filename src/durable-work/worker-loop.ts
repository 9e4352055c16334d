import type { Logger } from '@nestjs/common';
import { inBackground, isDatabaseBusy } from '../database/pool-gate';

/** At most one 'database unavailable' line per loop this often (a loop polls every few hundred ms). */
const UNAVAILABLE_LOG_EVERY_MS = 10_000;

/** One background worker: what it claims and how it works one item. */
export interface LoopSpec<T> {
  /** Log and metrics label. */
  name: string;
  /** Runs on this replica (its feature's `*_ENABLED` setting); a disabled loop still ticks when called. */
  enabled?: boolean;
  /** Pause between the end of one pass and the next. */
  intervalMs: number;
  /** The pause before the next pass, when it varies (a schedule with jitter); `intervalMs` otherwise. */
  nextDelayMs?: () => number;
  /** The pause before the first pass (default `intervalMs`); 0 runs it at once. */
  firstDelayMs?: number;
  /** At most this many items of this loop in progress on this replica (a pass claims only the room left). */
  concurrency: number;
  /** Claims up to `room` items (each under its lease). `stopping` aborts when the loop is being stopped. */
  claim(room: number, stopping: AbortSignal): Promise<T[]>;
  /** Works one claimed item; must hand it back or finish it. Errors are logged, never thrown further. */
  work(item: T): Promise<void>;
  /**
   * When one of this loop's items ends, run the next pass now instead of `intervalMs` after the last one: a queue
   * of short items (a webhook send to a fast receiver takes milliseconds) is then worked at the pace its items end,
   * not one room-full per interval. Passes stay one at a time: items ending during a pass make one more pass right
   * after it. The timer still runs a pass every `intervalMs` (work that became due meanwhile). Default false.
   */
  refill?: boolean;
}

/**
 * A loop with no items: `run` is the pass itself (a heartbeat, a recorder, a scheduled sync or prune), awaited
 * before the next pause. `stopping` aborts when the loop is being stopped.
 */
export interface PeriodicSpec extends Omit<LoopSpec<never>, 'concurrency' | 'claim' | 'work'> {
  run: (stopping: AbortSignal) => Promise<void>;
}

/** The loop spec of a periodic pass: it runs inside `claim` and claims nothing. */
export function periodicLoop({ run, ...spec }: PeriodicSpec): LoopSpec<never> {
  return {
    ...spec,
    concurrency: 1,
    claim: async (_room, stopping) => {
      await run(stopping);
      return [];
    },
    work: async () => undefined,
  };
}

/**
 * A gate that opens at most once per `intervalMs` (monotonic clock): for the warning a failing periodic task
 * would otherwise repeat every tick.
 */
export function logGate(intervalMs: number): () => boolean {
  let openedAt = -Infinity;
  return () => {
    const now = performance.now();
    if (now - openedAt < intervalMs) return false;
    openedAt = now;
    return true;
  };
}

/**
 * The one worker loop of background work (orders, ledger transactions): every `intervalMs` after the previous
 * pass ended, claim up to the room left under `concurrency` and start working each item without awaiting it,
 * so a long item (an order being tracked) never holds up the next pass. All of it runs as background work
 * (the pool's background share: database/pool-gate.ts). `stopClaiming()` (the shutdown drain) ends the passes
 * and wake-ups but lets the items in progress go on; `stop()` (the close) also waits for them. Nothing is held in
 * memory that a crash would lose, because the rows and their leases say it all.
 */
export class WorkerLoop<T> {
  private timer: NodeJS.Timeout | null = null;
  private pass: Promise<unknown> | null = null;
  private stopped = false;
  private claimsStopped = false;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly unavailableLogGate = logGate(UNAVAILABLE_LOG_EVERY_MS);
  private stopping = new AbortController();
  /** An item ended during the running pass (refill): run the next one right after it. */
  private refillPending = false;

  constructor(
    readonly spec: LoopSpec<T>,
    private readonly logger: Logger,
  ) {}

  /** Items in progress now. */
  get active(): number {
    return this.inFlight.size;
  }

  /** False once `stopClaiming()` or `stop()` was called: this loop claims nothing more. */
  get claiming(): boolean {
    return !this.stopped && !this.claimsStopped;
  }

  /** Starts the timer (once: a second call while running does nothing; never after `stopClaiming()`). */
  start(): void {
    if (this.timer !== null || this.pass !== null || this.claimsStopped) return;
    this.stopped = false;
    if (this.stopping.signal.aborted) this.stopping = new AbortController();
    this.schedule(this.spec.firstDelayMs ?? this.spec.intervalMs);
  }

  /** One pass: claims what there is room for and starts working it; returns how many it claimed. */
  async tick(): Promise<number> {
    const room = this.spec.concurrency - this.inFlight.size;
    if (room <= 0 || !this.claiming) return 0;
    const items = await inBackground(() => this.spec.claim(room, this.stopping.signal));
    for (const item of items) void this.track(inBackground(() => this.spec.work(item)));
    return items.length;
  }

  /** Runs `work` as one of this loop's items (counted against its concurrency, awaited on stop). */
  track(work: Promise<void>): Promise<void> {
    // The item's lease runs out and it is claimed again.
    const guarded = work.catch((error: unknown) =>
      logWorkError(this.logger, error, { loop: this.spec.name }, 'durable work item'),
    );
    this.inFlight.add(guarded);
    void guarded.finally(() => {
      this.inFlight.delete(guarded);
      if (this.spec.refill) this.refill();
    });
    return guarded;
  }

  /**
   * Claims `claim()`'s item now, off the timer (a wake-up: a ping, a manual retry), and works it as one of this
   * loop's items, only when the loop has room under its concurrency (a wake-up never bypasses the worker's room);
   * nothing once claiming stopped or while the loop is full: the row stays due and a pass takes it. Returns
   * whether it tried.
   */
  wake(claim: () => Promise<T | null>): boolean {
    if (!this.claiming || this.inFlight.size >= this.spec.concurrency) return false;
    void this.track(claim().then((item) => (item === null ? undefined : this.spec.work(item))));
    return true;
  }

  /**
   * The shutdown drain (docs/DEPLOY.md): no pass and no wake-up claims anything from now on; the items in progress
   * go on (their steps, lease renewals and hand-backs included) and `stop()` still awaits them. A pass already
   * claiming finishes its claim and works what it got. There is no way back: a draining replica only closes.
   */
  stopClaiming(): void {
    this.claimsStopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
  }

  /**
   * Stops claiming (a claim in progress sees its `stopping` signal abort: a long one, like a sync pass run inside
   * it, cancels itself); waits for the pass and every item in progress.
   */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopping.abort();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.pass;
    await Promise.allSettled(this.inFlight);
  }

  /**
   * A failed pass is retried on the next tick. While the database is down or restarting every pass fails the same
   * way: one short line per UNAVAILABLE_LOG_EVERY_MS instead of a stack trace per tick.
   */
  private passFailed(error: unknown): void {
    if (!isDatabaseBusy(error)) {
      this.logger.warn({ err: error, loop: this.spec.name }, 'durable work pass failed');
      return;
    }
    if (!this.unavailableLogGate()) return;
    const reason = error instanceof Error ? error.message : String(error);
    this.logger.warn({ loop: this.spec.name, reason }, 'durable work paused: database unavailable');
  }

  private schedule(delayMs = this.spec.nextDelayMs?.() ?? this.spec.intervalMs): void {
    if (!this.claiming) return;
    this.timer = setTimeout(() => this.runPass(), delayMs);
    this.timer.unref();
  }

  private runPass(): void {
    this.timer = null;
    this.pass = this.tick()
      .catch((error: unknown) => this.passFailed(error))
      .finally(() => {
        this.pass = null;
        const again = this.refillPending;
        this.refillPending = false;
        this.schedule(again ? 0 : undefined);
      });
  }

  /**
   * An item ended (spec.refill): its room is claimed again now — the pass waiting on the timer runs at once, or,
   * while a pass runs, one more right after it. Nothing when the loop is not running (tests call tick() by hand) or
   * no longer claiming.
   */
  private refill(): void {
    if (!this.claiming) return;
    if (this.pass !== null) {
      this.refillPending = true;
      return;
    }
    if (this.timer === null) return;
    clearTimeout(this.timer);
    this.runPass();
  }
}

/**
 * Logs a failed piece of background work: the database out of reach (restart, failover, pool exhausted) is an
 * outage, not a bug — one warning without a stack, `<what> interrupted: database unavailable`; anything else is an
 * error with its stack, `<what> failed` (or `crashedAs`).
 */
export function logWorkError(
  logger: Pick<Logger, 'warn' | 'error'>,
  error: unknown,
  fields: Record<string, unknown>,
  what: string,
  crashedAs = `${what} failed`,
): void {
  if (isDatabaseBusy(error))
    logger.warn(
      { ...fields, error: error instanceof Error ? error.message : String(error) },
      `${what} interrupted: database unavailable`,
    );
  else logger.error({ err: error, ...fields }, crashedAs);
}
