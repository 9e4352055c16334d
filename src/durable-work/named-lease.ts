/** The lease was taken over (or could not be renewed): its holder stops writing at once. */
export class LeaseLostError extends Error {
  constructor(message = 'lease lost: another holder took the job over') {
    super(message);
    this.name = 'LeaseLostError';
  }
}

/** What a held lease needs from storage (NamedLeaseRepository; a fake in unit tests). */
export interface LeaseStore {
  renew(name: string, fencingToken: string, ttlMs: number): Promise<boolean>;
}

export interface LeaseTimers {
  setInterval(fn: () => void, ms: number): unknown;
  clearInterval(handle: unknown): void;
}

const realTimers: LeaseTimers = {
  setInterval: (fn, ms) => setInterval(fn, ms).unref(),
  clearInterval: (handle) => clearInterval(handle as NodeJS.Timeout),
};

/** How often a held lease of `ttlMs` is renewed: every third of it (100 ms at the least). */
export function leaseRenewIntervalMs(ttlMs: number): number {
  return Math.max(100, Math.floor(ttlMs / 3));
}

/**
 * A named lease held by running work (a sync pass): renewed every third of its TTL. When a renewal finds the
 * token replaced (another holder took the job over after an expiry) the lease is lost for good: `signal` aborts
 * with a LeaseLostError so the work stops, and every write checks the token in its own transaction anyway
 * (NamedLeaseRepository.holds). A renewal that fails (database unreachable) is retried on the next tick; if the lease expires
 * meanwhile, the write-side check refuses the pass's next page.
 */
export class HeldLease {
  private readonly controller = new AbortController();
  private handle: unknown;
  private renewing = false;

  constructor(
    readonly name: string,
    readonly fencingToken: string,
    private readonly ttlMs: number,
    private readonly store: LeaseStore,
    private readonly onLost: (error: LeaseLostError) => void = () => undefined,
    private readonly timers: LeaseTimers = realTimers,
  ) {
    this.handle = this.timers.setInterval(() => void this.renew(), leaseRenewIntervalMs(ttlMs));
  }

  /** Aborted when the lease is lost or the holder stops (`abort(reason)`). */
  get signal(): AbortSignal {
    return this.controller.signal;
  }

  get lost(): boolean {
    return this.controller.signal.reason instanceof LeaseLostError;
  }

  /** One renewal (the timer calls this); returns whether the lease is still held. */
  async renew(): Promise<boolean> {
    if (this.controller.signal.aborted) return false;
    if (this.renewing) return true;
    this.renewing = true;
    try {
      const held = await this.store.renew(this.name, this.fencingToken, this.ttlMs);
      if (!held) {
        const error = new LeaseLostError();
        this.stop();
        this.controller.abort(error);
        this.onLost(error);
      }
      return held;
    } catch {
      return true;
    } finally {
      this.renewing = false;
    }
  }

  abort(reason: Error): void {
    if (!this.controller.signal.aborted) this.controller.abort(reason);
  }

  stop(): void {
    if (this.handle !== undefined) this.timers.clearInterval(this.handle);
    this.handle = undefined;
  }
}
