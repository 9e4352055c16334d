/**
 * The sandbox's notion of "now". Landing, blockhash expiry, listing expiry and "upcoming" all read it, so tests
 * can make minutes pass in microseconds instead of sleeping.
 */
export interface SandboxClock {
  /** Milliseconds since the Unix epoch, as the sandbox sees it. */
  now(): number;
  /** Moves the clock forward; never backwards, because ledger history must stay monotonic. */
  advance(ms: number): void;
}

/**
 * The latest time the sandbox clock may show (year 9000): far past any test, and leaves room for events
 * scheduled after "now" while every date stays an RFC 3339 year below 10000.
 */
export const MAX_SANDBOX_TIME_MS = Date.UTC(9000, 0, 1);

/** Wall clock plus an offset that only grows; `frozen` stops it so a test controls every millisecond. */
export class OffsetClock implements SandboxClock {
  private offsetMs = 0;
  private readonly frozenAt: number | undefined;

  constructor(options: { startMs?: number; frozen?: boolean } = {}) {
    const start = options.startMs ?? Date.now();
    this.frozenAt = options.frozen === true ? start : undefined;
    if (this.frozenAt === undefined) this.offsetMs = start - Date.now();
  }

  now(): number {
    return (this.frozenAt ?? Date.now()) + this.offsetMs;
  }

  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0)
      throw new RangeError('clock can only move forward by a finite amount');
    this.offsetMs += ms;
  }
}
